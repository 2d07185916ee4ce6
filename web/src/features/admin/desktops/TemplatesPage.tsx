import { useState } from 'react';
import { Badge, List, Menu, Select, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { IconTemplate, IconToggleLeft, IconToggleRight, IconTrash, IconUserShare } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminTemplate } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { StateBadge } from '../../../entities/desktop/StateBadge';
import { fullBadge, ConfirmModal } from '../shared/console';
import { deleteTemplate, refreshContent, templatesQuery, updateTemplate, templateTreeQuery } from './api';
import { ContentList, useContentColumns, type Column } from './ContentList';
import { ChangeOwnerModal } from './owner';
import '../../../i18n/areas/admin-desktops';
import { builtInText } from '../../../lib/built-in-text';

/** What deleting a template takes with it (the portal's tree), and who blocks it. */
function DeleteTemplate({ row, onClose }: { row: TAdminTemplate | null; onClose: () => void }) {
  const { t } = useTranslation();
  const tree = useQuery({ ...templateTreeQuery(row?.id ?? ''), enabled: row !== null });
  const pending = tree.data?.pending ?? [];
  return (
    <ConfirmModal
      opened={row !== null}
      onClose={onClose}
      title={row ? t('admin_desktops.templates.delete_title', { name: builtInText(t, row.name) }) : ''}
      confirmLabel={t('admin_desktops.common.delete')}
      disabled={!tree.data || pending.length > 0}
      testId="templates-delete"
      onConfirm={async () => {
        if (!row) return;
        await deleteTemplate(row.id);
        await refreshContent();
        notifySuccess(t('admin_desktops.common.done'));
      }}
    >
      <Text size="sm">{row ? t('admin_desktops.templates.delete_body', { owner: row.user_name }) : ''}</Text>
      {tree.data && (
        <List size="sm" data-testid="templates-delete-tree">
          <List.Item>{t('admin_desktops.templates.delete_tree', { desktops: tree.data.desktops, templates: tree.data.templates })}</List.Item>
        </List>
      )}
      {pending.length > 0 && (
        <Text size="sm" c="red" data-testid="templates-delete-pending">
          {t('admin_desktops.templates.delete_pending', { names: pending.map((p) => `${p.name} (${p.user_name ?? '?'})`).slice(0, 8).join(', ') })}
        </Text>
      )}
    </ConfirmModal>
  );
}

/** /isard-admin/templates: every template across owners; enable or disable, give to another owner, delete with its tree. */
export default function TemplatesPage() {
  const { t } = useTranslation();
  const [owning, setOwning] = useState<TAdminTemplate | null>(null);
  const [deleting, setDeleting] = useState<TAdminTemplate | null>(null);
  const cols = useContentColumns();
  const toggle = (row: TAdminTemplate) =>
    void updateTemplate(row.id, { enabled: !row.enabled })
      .then(async () => {
        await refreshContent();
        notifySuccess(t(row.enabled ? 'admin_desktops.templates.disabled_done' : 'admin_desktops.templates.enabled_done'));
      })
      .catch(handleError);
  const columns: Column<TAdminTemplate>[] = [
    cols.name(t('admin_desktops.templates.name')),
    cols.owner(),
    cols.category(),
    { key: 'status', label: t('admin_desktops.common.status'), sort: 'status', render: (r) => <StateBadge status={r.status} size="sm" /> },
    {
      key: 'enabled', label: t('admin_desktops.templates.enabled'), sort: 'enabled',
      render: (r) => (
        <Badge styles={fullBadge} variant="dot" color={r.enabled ? 'teal' : 'gray'} data-testid="template-enabled" data-enabled={r.enabled}>
          {t(r.enabled ? 'admin_desktops.templates.enabled' : 'admin_desktops.templates.disabled')}
        </Badge>
      ),
    },
    {
      key: 'shared', label: t('admin_desktops.common.shared'),
      render: (r) => <Text size="sm">{t(r.shared ? 'admin_desktops.common.yes' : 'admin_desktops.common.no')}</Text>,
    },
    cols.size(),
    { key: 'derivatives', label: t('admin_desktops.templates.derivatives'), render: (r) => <Text size="sm">{r.derivatives}</Text> },
    cols.created(),
  ];
  return (
    <>
      <ContentList
        area="templates"
        icon={<IconTemplate size={28} />}
        query={templatesQuery}
        columns={columns}
        filters={(params, patch) => (
          <>
            <Select
              placeholder={t('admin_desktops.templates.enabled')}
              aria-label={t('admin_desktops.templates.enabled')}
              data={[{ value: 'true', label: t('admin_desktops.templates.enabled') }, { value: 'false', label: t('admin_desktops.templates.disabled') }]}
              value={(params.enabled as string) ?? null}
              onChange={(v) => patch({ enabled: v })}
              clearable
              style={{ flex: '1 1 130px' }}
              data-testid="templates-filter-enabled"
            />
            <Select
              placeholder={t('admin_desktops.common.shared')}
              aria-label={t('admin_desktops.common.shared')}
              data={[{ value: 'true', label: t('admin_desktops.common.shared') }, { value: 'false', label: t('admin_desktops.common.not_shared') }]}
              value={(params.shared as string) ?? null}
              onChange={(v) => patch({ shared: v })}
              clearable
              style={{ flex: '1 1 130px' }}
              data-testid="templates-filter-shared"
            />
          </>
        )}
        actions={(r) => (
          <>
            <Menu.Item leftSection={r.enabled ? <IconToggleLeft size={14} /> : <IconToggleRight size={14} />} onClick={() => toggle(r)} data-testid="template-toggle">
              {t(r.enabled ? 'admin_desktops.templates.disable' : 'admin_desktops.templates.enable')}
            </Menu.Item>
            <Menu.Item leftSection={<IconUserShare size={14} />} onClick={() => setOwning(r)} data-testid="template-owner">
              {t('admin_desktops.common.change_owner')}
            </Menu.Item>
            <Menu.Divider />
            <Menu.Item color="red" leftSection={<IconTrash size={14} />} onClick={() => setDeleting(r)} data-testid="template-delete">
              {t('admin_desktops.common.delete')}
            </Menu.Item>
          </>
        )}
      />
      <ChangeOwnerModal row={owning} onClose={() => setOwning(null)} save={(owner) => updateTemplate(owning!.id, { owner_id: owner })} testId="templates-owner" />
      <DeleteTemplate row={deleting} onClose={() => setDeleting(null)} />
    </>
  );
}

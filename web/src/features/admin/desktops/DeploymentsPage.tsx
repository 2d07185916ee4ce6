import { useState } from 'react';
import { Badge, Menu, Select, Text } from '@mantine/core';
import { IconEye, IconEyeOff, IconTrash, IconUserShare, IconUsersGroup } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminDeployment } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../../lib/error-handler';
import { fullBadge, ConfirmModal } from '../shared/console';
import { deleteDeployment, deploymentsQuery, refreshContent, updateDeployment } from './api';
import { ContentList, useContentColumns, type Column } from './ContentList';
import { ChangeOwnerModal } from './owner';
import '../../../i18n/areas/admin-desktops';
import { builtInText } from '../../../lib/built-in-text';

/** /isard-admin/deployments: every deployment across owners; show or hide, give to another owner, delete to the bin. */
export default function DeploymentsPage() {
  const { t } = useTranslation();
  const [owning, setOwning] = useState<TAdminDeployment | null>(null);
  const [deleting, setDeleting] = useState<TAdminDeployment | null>(null);
  const cols = useContentColumns();
  const setVisible = (row: TAdminDeployment) =>
    void updateDeployment(row.id, { visible: !row.visible })
      .then(async () => {
        await refreshContent();
        notifySuccess(t('admin_desktops.common.done'));
      })
      .catch(handleError);
  const columns: Column<TAdminDeployment>[] = [
    cols.name(t('admin_desktops.deployments.name')),
    cols.owner(),
    cols.category(),
    { key: 'template', label: t('admin_desktops.deployments.template'), render: (r) => <Text size="sm">{builtInText(t, r.template_name) ?? '—'}</Text> },
    {
      key: 'visible', label: t('admin_desktops.common.status'), sort: 'visible',
      render: (r) => (
        <Badge styles={fullBadge} variant="dot" color={r.visible ? 'teal' : 'gray'} data-testid="deployment-visible" data-visible={r.visible}>
          {t(r.visible ? 'admin_desktops.deployments.visible' : 'admin_desktops.deployments.hidden')}
        </Badge>
      ),
    },
    {
      key: 'desktops', label: t('admin_desktops.deployments.desktops'), sort: 'desktops',
      render: (r) => (
        <>
          <Text size="sm">{r.desktops}</Text>
          <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
            {t('admin_desktops.deployments.started', { count: r.started })}
          </Text>
        </>
      ),
    },
    cols.size(false),
    cols.created(),
  ];
  return (
    <>
      <ContentList
        area="deployments"
        icon={<IconUsersGroup size={28} />}
        query={deploymentsQuery}
        columns={columns}
        filters={(params, patch) => (
          <Select
            placeholder={t('admin_desktops.common.status')}
            aria-label={t('admin_desktops.common.status')}
            data={[{ value: 'true', label: t('admin_desktops.deployments.visible') }, { value: 'false', label: t('admin_desktops.deployments.hidden') }]}
            value={(params.visible as string) ?? null}
            onChange={(v) => patch({ visible: v })}
            clearable
            style={{ flex: '1 1 130px' }}
            data-testid="deployments-filter-visible"
          />
        )}
        actions={(r) => (
          <>
            <Menu.Item leftSection={r.visible ? <IconEyeOff size={14} /> : <IconEye size={14} />} onClick={() => setVisible(r)} data-testid="deployment-toggle">
              {t(r.visible ? 'admin_desktops.deployments.hide' : 'admin_desktops.deployments.show')}
            </Menu.Item>
            <Menu.Item leftSection={<IconUserShare size={14} />} onClick={() => setOwning(r)} data-testid="deployment-owner">
              {t('admin_desktops.common.change_owner')}
            </Menu.Item>
            <Menu.Divider />
            <Menu.Item color="red" leftSection={<IconTrash size={14} />} onClick={() => setDeleting(r)} data-testid="deployment-delete">
              {t('admin_desktops.common.delete')}
            </Menu.Item>
          </>
        )}
      />
      <ChangeOwnerModal row={owning} onClose={() => setOwning(null)} save={(owner) => updateDeployment(owning!.id, { owner_id: owner })} testId="deployments-owner" />
      <ConfirmModal
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={deleting ? t('admin_desktops.deployments.delete_title', { name: builtInText(t, deleting.name) }) : ''}
        confirmLabel={t('admin_desktops.common.delete')}
        testId="deployments-delete"
        onConfirm={async () => {
          if (!deleting) return;
          await deleteDeployment(deleting.id);
          await refreshContent();
          notifySuccess(t('admin_desktops.common.done'));
        }}
      >
        <Text size="sm">{deleting ? t('admin_desktops.deployments.delete_body', { count: deleting.desktops, owner: deleting.user_name }) : ''}</Text>
      </ConfirmModal>
    </>
  );
}

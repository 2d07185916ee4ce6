import { useState } from 'react';
import { Badge, Menu, Select, Text } from '@mantine/core';
import { IconDisc, IconTrash, IconUserShare } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminMedia } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { formatBytes } from '../../../entities/format';
import { fullBadge } from '../people/shared';
import { ConfirmModal } from '../shared/desktops-list';
import { deleteMedia, mediaQuery, refreshContent, updateMedia } from './api';
import { ContentList, type Column } from './ContentList';
import { ChangeOwnerModal, OwnerCell } from './owner';
import '../../../i18n/areas/admin-desktops';
import { builtInText } from '../../../lib/built-in-text';

const STATUS_COLOR: Record<string, string> = { Downloaded: 'teal', Downloading: 'blue', DownloadStarting: 'blue', ResetDownloading: 'blue', DownloadFailed: 'red', DownloadFailedInvalidFormat: 'red' };

/** /isard-admin/media: every installation image across owners; give to another owner, delete. */
export default function MediaPage() {
  const { t, i18n } = useTranslation();
  const [owning, setOwning] = useState<TAdminMedia | null>(null);
  const [deleting, setDeleting] = useState<TAdminMedia | null>(null);
  const dateFmt = new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium' });
  const columns: Column<TAdminMedia>[] = [
    {
      key: 'name', label: t('admin_desktops.media.name'), sort: 'name',
      render: (r) => (
        <>
          <Text size="sm" fw={600}>
            {builtInText(t, r.name)}
          </Text>
          <Text size="xs" c="dimmed" lineClamp={1}>
            {builtInText(t, r.description)}
          </Text>
        </>
      ),
    },
    { key: 'owner', label: t('admin_desktops.common.owner'), sort: 'owner', render: (r) => <OwnerCell row={r} /> },
    { key: 'category', label: t('admin_desktops.common.category'), sort: 'category', adminOnly: true, render: (r) => <Text size="sm">{builtInText(t, r.category_name)}</Text> },
    { key: 'kind', label: t('admin_desktops.media.kind'), sort: 'kind', render: (r) => <Text size="sm">{r.kind.toUpperCase()}</Text> },
    {
      key: 'status', label: t('admin_desktops.common.status'), sort: 'status',
      render: (r) => (
        <Badge styles={fullBadge} variant="light" radius="sm" color={STATUS_COLOR[r.status] ?? 'gray'} data-testid="media-status">
          {t(`media.status.${r.status}`, { defaultValue: r.status })}
        </Badge>
      ),
    },
    { key: 'shared', label: t('admin_desktops.common.shared'), render: (r) => <Text size="sm">{t(r.shared ? 'admin_desktops.common.yes' : 'admin_desktops.common.no')}</Text> },
    { key: 'size', label: t('admin_desktops.common.size'), sort: 'size', render: (r) => <Text size="sm" style={{ whiteSpace: 'nowrap' }}>{formatBytes(r.size, i18n.language)}</Text> },
    { key: 'desktops', label: t('admin_desktops.media.desktops'), render: (r) => <Text size="sm">{r.desktops}</Text> },
    { key: 'created', label: t('admin_desktops.common.created'), sort: 'created', render: (r) => <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>{dateFmt.format(new Date(r.created))}</Text> },
  ];
  return (
    <>
      <ContentList
        area="media"
        icon={<IconDisc size={28} />}
        query={mediaQuery}
        columns={columns}
        filters={(params, patch) => (
          <Select
            placeholder={t('admin_desktops.media.kind')}
            aria-label={t('admin_desktops.media.kind')}
            data={[{ value: 'iso', label: 'ISO' }, { value: 'floppy', label: 'Floppy' }]}
            value={(params.kind as string) ?? null}
            onChange={(v) => patch({ kind: v })}
            clearable
            style={{ flex: '1 1 120px' }}
            data-testid="media-filter-kind"
          />
        )}
        actions={(r) => (
          <>
            <Menu.Item leftSection={<IconUserShare size={14} />} onClick={() => setOwning(r)} data-testid="media-owner">
              {t('admin_desktops.common.change_owner')}
            </Menu.Item>
            <Menu.Divider />
            <Menu.Item color="red" leftSection={<IconTrash size={14} />} onClick={() => setDeleting(r)} data-testid="media-delete">
              {t('admin_desktops.common.delete')}
            </Menu.Item>
          </>
        )}
      />
      <ChangeOwnerModal row={owning} onClose={() => setOwning(null)} save={(owner) => updateMedia(owning!.id, { owner_id: owner })} testId="media-owner" />
      <ConfirmModal
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={deleting ? t('admin_desktops.media.delete_title', { name: builtInText(t, deleting.name) }) : ''}
        confirmLabel={t('admin_desktops.common.delete')}
        testId="media-delete"
        onConfirm={async () => {
          if (!deleting) return;
          await deleteMedia(deleting.id);
          await refreshContent();
          notifySuccess(t('admin_desktops.common.done'));
        }}
      >
        <Text size="sm">{t('admin_desktops.media.delete_body')}</Text>
      </ConfirmModal>
    </>
  );
}

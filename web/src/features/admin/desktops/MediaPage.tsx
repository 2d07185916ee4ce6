import { useState } from 'react';
import { Badge, Menu, Select, Text } from '@mantine/core';
import { IconDisc, IconTrash, IconUserShare } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TAdminMedia } from '@vdi/contracts';
import { notifySuccess } from '../../../lib/error-handler';
import { fullBadge, ConfirmModal } from '../shared/console';
import { deleteMedia, mediaQuery, refreshContent, updateMedia } from './api';
import { ContentList, useContentColumns, type Column } from './ContentList';
import { ChangeOwnerModal } from './owner';
import '../../../i18n/areas/admin-desktops';
import { builtInText } from '../../../lib/built-in-text';
import '../../../i18n/areas/content';

const STATUS_COLOR: Record<string, string> = { Downloaded: 'teal', Downloading: 'blue', DownloadStarting: 'blue', ResetDownloading: 'blue', DownloadFailed: 'red', DownloadFailedInvalidFormat: 'red' };

/** /isard-admin/media: every installation image across owners; give to another owner, delete. */
export default function MediaPage() {
  const { t } = useTranslation();
  const [owning, setOwning] = useState<TAdminMedia | null>(null);
  const [deleting, setDeleting] = useState<TAdminMedia | null>(null);
  const cols = useContentColumns();
  const columns: Column<TAdminMedia>[] = [
    cols.name(t('admin_desktops.media.name')),
    cols.owner(),
    cols.category(),
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
    cols.size(),
    { key: 'desktops', label: t('admin_desktops.media.desktops'), render: (r) => <Text size="sm">{r.desktops}</Text> },
    cols.created(),
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

import { useEffect, useState } from 'react';
import { Box, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { notifySuccess } from '../../../lib/error-handler';
import { ConfirmModal } from '../shared/console';
import { UserPicker } from '../shared/desktops-list';
import { refreshContent } from './api';
import '../../../i18n/areas/admin-desktops';
import { builtInText } from '../../../lib/built-in-text';

export type Owned = { id: string; name: string; user_name: string; username: string; category_name: string; group_name: string };

/** How wide an owner's cell grows (px): a long name or user name ends in "…" (whole on hover) rather than widening the table. */
const OWNER_MAX_WIDTH = 140;

/** The owner's name, user name and category in a cell. */
export function OwnerCell({ row, withCategory }: { row: Owned; withCategory?: boolean }) {
  const { t } = useTranslation();
  const second = `${row.username}${withCategory ? ` · ${builtInText(t, row.category_name)}` : ''}`;
  return (
    <Box maw={OWNER_MAX_WIDTH}>
      <Text size="sm" truncate="end" title={row.user_name}>
        {row.user_name}
      </Text>
      <Text size="xs" c="dimmed" truncate="end" title={second}>
        {second}
      </Text>
    </Box>
  );
}

/** Gives a template, media or deployment to another owner (advanced, manager or admin); a desktop (`anyone`) to any person, with its own words (`body`). */
export function ChangeOwnerModal({ row, onClose, save, testId, anyone, body }: {
  row: Owned | null; onClose: () => void; save: (ownerId: string) => Promise<unknown>; testId: string; anyone?: boolean; body?: string;
}) {
  const { t } = useTranslation();
  const [owner, setOwner] = useState<string | null>(null);
  useEffect(() => setOwner(null), [row]);
  return (
    <ConfirmModal
      opened={row !== null}
      onClose={onClose}
      title={row ? t('admin_desktops.common.change_owner_title', { name: builtInText(t, row.name) }) : ''}
      confirmLabel={t('admin_desktops.common.change_owner')}
      color="indigo"
      disabled={!owner}
      testId={testId}
      onConfirm={async () => {
        if (!owner) return;
        await save(owner);
        await refreshContent();
        notifySuccess(t('admin_desktops.common.done'));
      }}
    >
      <Text size="sm">{body ?? t('admin_desktops.common.change_owner_body')}</Text>
      <UserPicker
        label={t('admin_desktops.common.new_owner')}
        placeholder={t('admin_desktops.common.new_owner_search')}
        value={owner}
        onChange={setOwner}
        privileged={!anyone}
        testId={`${testId}-user`}
      />
    </ConfirmModal>
  );
}

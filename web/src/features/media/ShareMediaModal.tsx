import { useEffect, useState } from 'react';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type { TMedia, TMediaAllowed } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { updateAllowed } from '../../entities/sharing/api';
import { SharingPicker } from '../../entities/sharing/SharingPicker';
import { ownMediaQuery } from './api';
import '../../i18n/areas/content';

/** Whom one's media is shared with: the permission picker, saved by POST /admin/allowed/update/media. */
export function ShareMediaModal({ media, onClose }: { media: TMedia | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [allowed, setAllowed] = useState<TMediaAllowed | null>(null);
  useEffect(() => setAllowed(media?.allowed ?? null), [media]);
  const save = useMutation({
    mutationFn: async (v: { media: TMedia; allowed: TMediaAllowed }) => updateAllowed('media', v.media.id, v.allowed),
    onSuccess: (_, v) => {
      // The media_update event follows; the list shows the change at once.
      qc.setQueryData<TMedia[]>(ownMediaQuery.queryKey, (l) => l?.map((m) => (m.id === v.media.id ? { ...m, allowed: v.allowed } : m)));
      notifySuccess(t('media.share.saved', { name: v.media.name }));
      onClose();
    },
    onError: (err) => handleError(err),
  });
  return (
    <Modal opened={Boolean(media)} onClose={onClose} title={t('media.share.title', { name: media?.name ?? '' })} centered size="lg" data-testid="media-share-modal">
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {t('media.share.hint')}
        </Text>
        {allowed && <SharingPicker value={allowed} onChange={setAllowed} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose}>
            {t('common.cancel')}
          </Button>
          <Button onClick={() => media && allowed && save.mutate({ media, allowed })} loading={save.isPending} data-testid="media-share-save">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

import { useState } from 'react';
import { Button, Group, Stack, Text } from '@mantine/core';
import { modals } from '../../lib/modals';
import { IconPlayerStop } from '@tabler/icons-react';
import { useQueryClient } from '@tanstack/react-query';
import i18next from 'i18next';
import { useTranslation } from 'react-i18next';
import { HttpError } from '../../lib/api';
import { builtInText } from '../../lib/built-in-text';
import { errorMessage } from '../../lib/errors';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { desktopCall, DESKTOPS_KEY } from './api';

type Held = { id: string; name: string };

/** A start refused by the person's own running quota, naming the desktops that hold it. */
export const heldBy = (err: unknown): Held[] | null => {
  if (!(err instanceof HttpError) || !/^desktop_start_(user|memory|vcpu)_quota_exceeded$/.test(err.code)) return null;
  const held = err.body.params?.running_desktops;
  return Array.isArray(held) && held.length > 0 ? (held as Held[]) : null;
};

function QuotaHeld({ refusal, held, onClose }: { refusal: HttpError; held: Held[]; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const qc = useQueryClient();
  const [stopping, setStopping] = useState<string | null>(null);
  const stop = async (d: Held) => {
    setStopping(d.id);
    try {
      await desktopCall('stop', d.id);
      void qc.invalidateQueries({ queryKey: DESKTOPS_KEY });
      notifySuccess(t('quota_dialog.stopping', { name: builtInText(t, d.name) }));
      onClose();
    } catch (err) {
      handleError(err);
      setStopping(null);
    }
  };
  return (
    <Stack gap="md">
      <Text size="sm">{errorMessage(t, refusal, (k) => i18n.exists(k))}</Text>
      <Text size="sm" fw={500}>
        {t('quota_dialog.running_now', { count: held.length })}
      </Text>
      <Stack gap="xs" data-testid="quota-held">
        {held.map((d) => (
          <Group key={d.id} justify="space-between" wrap="nowrap">
            <Text size="sm">{builtInText(t, d.name)}</Text>
            <Button
              size="xs"
              color="red"
              variant="light"
              leftSection={<IconPlayerStop size={14} />}
              loading={stopping === d.id}
              disabled={stopping !== null && stopping !== d.id}
              onClick={() => void stop(d)}
              data-testid="quota-stop"
            >
              {t('quota_dialog.stop', { name: builtInText(t, d.name) })}
            </Button>
          </Group>
        ))}
      </Stack>
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose}>
          {t('common.close')}
        </Button>
      </Group>
    </Stack>
  );
}

/** One dialog for a start over the person's quota: why, which desktops hold it, and a button to stop each. */
export function openQuotaHeldDialog(refusal: HttpError, held: Held[]) {
  const id = modals.open({
    title: i18next.t('quota_dialog.title'),
    centered: true,
    children: <QuotaHeld refusal={refusal} held={held} onClose={() => modals.close(id)} />,
  });
}

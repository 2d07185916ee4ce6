import { useEffect, useState } from 'react';
import { Alert, Button, Group, Modal, NumberInput, SegmentedControl, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconArrowsMaximize } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { STORAGE_PRIORITIES, type TStorageDisk, type TStoragePriority } from '@vdi/contracts';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { HttpError } from '../../lib/api';
import { increaseStorage, STORAGE_KEY } from './api';
import { grownSize, incrementOf } from './logic';
import { formatGb } from '../../entities/format';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

/**
 * The storage increase modal (spec 001 §2): current size, new size, priority. Only admins choose
 * the priority; everyone else gets low. A refusal shows its `increase_<code>` text when there is one
 * (spec 001 §8), the generic handling otherwise (quota codes open the quota dialog).
 */
export function IncreaseModal({ disk, isAdmin, onClose }: { disk: TStorageDisk | null; isAdmin: boolean; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const qc = useQueryClient();
  const [size, setSize] = useState<number | string>('');
  const [priority, setPriority] = useState<TStoragePriority>('low');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (disk) {
      setSize(1);
      setPriority('low');
      setError(null);
    }
  }, [disk]);

  const increment = disk ? incrementOf(size) : null;
  const run = useMutation({
    mutationFn: () => increaseStorage(disk!.id, isAdmin ? priority : 'low', increment!),
    onSuccess: () => {
      notifySuccess(t('storage.notify.started'));
      void qc.invalidateQueries({ queryKey: STORAGE_KEY, exact: true });
      onClose();
    },
    onError: (err) => {
      const key = err instanceof HttpError ? `errors.increase_${err.code}` : '';
      if (key && i18n.exists(key)) setError(t(key, { ...(err instanceof HttpError ? (err.body.params ?? {}) : {}) }));
      else handleError(err);
    },
  });

  const lang = i18n.language;
  const names = disk?.domains.map((d) => builtInText(t, d.name)).join(', ');
  return (
    <Modal opened={Boolean(disk)} onClose={onClose} title={t('storage.increase.title')} centered size="md">
      {disk && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (increment === null) return setError(t('storage.increase.too_small'));
            setError(null);
            run.mutate();
          }}
        >
          <Stack gap="md">
            <Text size="sm" c="dimmed">
              {names ? t('storage.increase.explain', { names }) : t('storage.increase.explain_unused')}
            </Text>
            <Group gap="xl">
              <div>
                <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
                  {t('storage.increase.current')}
                </Text>
                <Text fw={600} data-testid="increase-current">
                  {t('storage.gb', { value: formatGb(disk.virtual_size, lang) })}
                </Text>
              </div>
              {increment !== null && (
                <div>
                  <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
                    {t('storage.increase.result')}
                  </Text>
                  <Text fw={600} c="teal" data-testid="increase-result">
                    {t('storage.gb', { value: formatGb(grownSize(disk.virtual_size, increment), lang) })}
                  </Text>
                </div>
              )}
            </Group>
            <NumberInput
              label={t('storage.increase.new_size')}
              description={t('storage.increase.new_size_hint')}
              value={size}
              onChange={(v) => {
                setSize(v);
                setError(null);
              }}
              min={1}
              step={1}
              allowDecimal={false}
              allowNegative={false}
              suffix=" GB"
              data-testid="increase-size"
              data-autofocus
            />
            <div>
              <Text size="sm" fw={500} mb={4}>
                {t('storage.increase.priority')}
              </Text>
              <SegmentedControl
                fullWidth
                value={isAdmin ? priority : 'low'}
                onChange={(v) => setPriority(v as TStoragePriority)}
                disabled={!isAdmin}
                data={STORAGE_PRIORITIES.map((p) => ({ value: p, label: t(`storage.priorities.${p}`) }))}
                data-testid="increase-priority"
              />
              {!isAdmin && (
                <Text size="xs" c="dimmed" mt={4}>
                  {t('storage.increase.priority_admin_only')}
                </Text>
              )}
            </div>
            {error && (
              <Alert color="red" icon={<IconAlertTriangle size={18} />} data-testid="increase-error">
                {error}
              </Alert>
            )}
            <Group justify="flex-end" gap="sm">
              <Button variant="default" onClick={onClose}>
                {t('common.cancel')}
              </Button>
              <Button type="submit" leftSection={<IconArrowsMaximize size={16} />} loading={run.isPending} disabled={increment === null} data-testid="increase-submit">
                {t('storage.increase.submit')}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

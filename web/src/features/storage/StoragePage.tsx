import { useCallback, useState } from 'react';
import { Badge, Button, Card, Group, Paper, Progress, SimpleGrid, Stack, Table, Text, ThemeIcon, Tooltip } from '@mantine/core';
import { CardTable } from '../../components/CardTable';
import { modals } from '../../lib/modals';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery } from '@tanstack/react-query';
import { IconArrowsMaximize, IconDatabase, IconDeviceDesktop, IconTemplate, IconX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TStorageDisk, TStorageEvent } from '@vdi/contracts';
import { handleError, NOTIFY_MS, notifySuccess } from '../../lib/error-handler';
import { userQuery } from '../../lib/queries';
import { EmptyState, LoadError, ListSkeleton } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { abortStorage, storageQuery, useStorageLive } from './api';
import { IncreaseModal } from './IncreaseModal';
import { totals, usageColor, usagePercent } from './logic';
import { formatEpoch, formatGb, GB } from '../../entities/format';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

function Summary({ disks }: { disks: TStorageDisk[] }) {
  const { t, i18n } = useTranslation();
  const { data: user } = useQuery(userQuery);
  const sum = totals(disks);
  const quota = user?.quota ? user.quota.total_size : 0;
  const usedGb = user?.used.total_size ?? 0;
  const quotaPercent = quota > 0 ? Math.min(100, Math.round((usedGb / quota) * 100)) : 0;
  const fmt = (n: number) => formatGb(n * GB, i18n.language);
  return (
    <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="lg" mb="lg" data-testid="storage-summary">
      <Card withBorder radius="lg" padding="lg">
        <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
          {t('storage.summary.disks')}
        </Text>
        <Text fz={28} fw={700} lh={1.2}>
          {disks.length}
        </Text>
        <Text size="sm" c="dimmed">
          {t('storage.summary.disks_hint', { count: disks.filter((d) => d.domains.length > 0).length })}
        </Text>
      </Card>
      <Card withBorder radius="lg" padding="lg">
        <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
          {t('storage.summary.used')}
        </Text>
        <Text fz={28} fw={700} lh={1.2}>
          {t('storage.gb', { value: formatGb(sum.actual, i18n.language) })}
        </Text>
        <Text size="sm" c="dimmed">
          {t('storage.summary.used_hint', { total: t('storage.gb', { value: formatGb(sum.virtual, i18n.language) }) })}
        </Text>
      </Card>
      <Card withBorder radius="lg" padding="lg" data-testid="storage-quota">
        <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
          {t('storage.summary.quota')}
        </Text>
        {quota > 0 ? (
          <>
            <Group justify="space-between" align="baseline" mt={4}>
              <Text fz={28} fw={700} lh={1.2}>
                {quotaPercent}%
              </Text>
              <Text size="sm" c="dimmed">
                {t('storage.summary.quota_of', { used: fmt(usedGb), total: fmt(quota) })}
              </Text>
            </Group>
            <Progress value={quotaPercent} color={usageColor(quotaPercent)} size="lg" radius="xl" mt="xs" aria-label={t('storage.summary.quota')} />
            {user?.quota && user.quota.desktops_disk_size > 0 && (
              <Text size="xs" c="dimmed" mt={6}>
                {t('storage.summary.max_disk', { value: fmt(user.quota.desktops_disk_size) })}
              </Text>
            )}
          </>
        ) : (
          <Text size="sm" c="dimmed" mt={4}>
            {t('storage.summary.no_quota')}
          </Text>
        )}
      </Card>
    </SimpleGrid>
  );
}

function DiskRow({ d, me, canIncrease, onIncrease }: { d: TStorageDisk; me: string; canIncrease: boolean; onIncrease: (d: TStorageDisk) => void }) {
  const { t, i18n } = useTranslation();
  const percent = usagePercent(d.actual_size, d.virtual_size);
  const op = d.operation;
  const cancel = useMutation({
    mutationFn: () => abortStorage(d.id),
    onSuccess: () => notifySuccess(t('storage.notify.cancelling')),
    onError: (err) => handleError(err),
  });
  const confirmCancel = () =>
    modals.openConfirmModal({
      title: t('storage.cancel.title'),
      centered: true,
      children: <Text size="sm">{t('storage.cancel.body')}</Text>,
      labels: { confirm: t('storage.cancel.confirm'), cancel: t('common.close') },
      confirmProps: { color: 'red', 'data-testid': 'confirm-cancel-operation' },
      onConfirm: () => cancel.mutate(),
    });
  const isTemplate = d.type === 'template';
  const title = t(isTemplate ? 'storage.kinds.template' : 'storage.kinds.desktop');
  return (
    <Table.Tr data-testid="storage-row" data-storage-id={d.id} data-status={d.status}>
      <Table.Td>
        <Group gap="sm" wrap="nowrap">
          <ThemeIcon variant="light" radius="md" size={36} color={isTemplate ? 'violet' : 'indigo'}>
            {isTemplate ? <IconTemplate size={20} /> : <IconDatabase size={20} />}
          </ThemeIcon>
          <div style={{ minWidth: 0 }}>
            <Group gap={6} wrap="nowrap">
              <Text fw={600} size="sm" lineClamp={1} data-testid="storage-name">
                {title}
              </Text>
            </Group>
            <Text size="xs" c="dimmed" ff="monospace" lineClamp={1}>
              {d.format} · {d.id.slice(0, 8)}
            </Text>
          </div>
        </Group>
      </Table.Td>
      <Table.Td data-label={t('storage.columns.desktops')}>
        {d.domains.length === 0 ? (
          <Text size="sm" c="dimmed">
            {t('storage.no_desktops')}
          </Text>
        ) : (
          <Group gap={4}>
            {d.domains.map((x) => (
              <Badge key={x.id} variant="default" radius="sm" leftSection={<IconDeviceDesktop size={12} />} style={{ textTransform: 'none' }} data-testid="storage-desktop">
                {builtInText(t, x.name)}
              </Badge>
            ))}
          </Group>
        )}
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }} data-testid="storage-size" data-label={t('storage.columns.size')}>
        <Text size="sm" fw={500}>
          {t('storage.used_of_total', { used: formatGb(d.actual_size, i18n.language), total: formatGb(d.virtual_size, i18n.language) })}
        </Text>
      </Table.Td>
      <Table.Td miw={140} data-label={t('storage.columns.usage')}>
        <Tooltip label={t('storage.usage_tooltip', { percent })} withArrow>
          <Group gap="xs" wrap="nowrap">
            <Progress value={percent} color={usageColor(percent)} size="md" radius="xl" style={{ flex: 1 }} aria-label={t('storage.columns.usage')} />
            <Text size="xs" c="dimmed" w={34} ta="right" data-testid="storage-percent">
              {percent}%
            </Text>
          </Group>
        </Tooltip>
      </Table.Td>
      <Table.Td style={{ whiteSpace: 'nowrap' }} data-label={t('storage.columns.last')}>
        <Text size="sm">{formatEpoch(d.last) ?? '—'}</Text>
      </Table.Td>
      <Table.Td>
        {op ? (
          <Stack gap={4} miw={250} data-testid="storage-operation">
            <Group justify="space-between" gap="xs" wrap="nowrap">
              <Text size="xs" fw={600} c="grape" style={{ whiteSpace: 'nowrap' }}>
                {t('storage.operation.increase', { progress: op.progress })}
              </Text>
              {op.user_id === me && (
                <Button size="compact-xs" variant="subtle" color="red" leftSection={<IconX size={12} />} loading={cancel.isPending} onClick={confirmCancel} data-testid="storage-cancel">
                  {t('storage.cancel.button')}
                </Button>
              )}
            </Group>
            <Progress value={Math.max(op.progress, 5)} color="grape" size="sm" radius="xl" animated striped aria-label={t('storage.operation.label')} />
          </Stack>
        ) : canIncrease ? (
          <Group justify="flex-end">
            <Tooltip label={t('storage.increase.template_hint')} disabled={!isTemplate} withArrow>
              <Button
                size="xs"
                variant="light"
                leftSection={<IconArrowsMaximize size={14} />}
                disabled={isTemplate || d.status !== 'ready'}
                onClick={() => onIncrease(d)}
                data-testid="storage-increase"
              >
                {t('storage.increase.button')}
              </Button>
            </Tooltip>
          </Group>
        ) : null}
      </Table.Td>
    </Table.Tr>
  );
}

export default function StoragePage() {
  const { t, i18n } = useTranslation();
  const { data: user } = useQuery(userQuery);
  const { data: disks, isLoading, isError, refetch, isRefetching } = useQuery(storageQuery);
  const [increasing, setIncreasing] = useState<TStorageDisk | null>(null);
  const onOutcome = useCallback(
    (e: TStorageEvent) => {
      const size = t('storage.gb', { value: formatGb(e.virtual_size, i18n.language) });
      if (e.outcome === 'done') notifySuccess(t('storage.notify.done', { size }));
      else if (e.outcome === 'aborted') notifications.show({ message: t('storage.notify.aborted'), color: 'gray', autoClose: NOTIFY_MS });
      else notifications.show({ message: t('storage.notify.failed'), color: 'red', autoClose: NOTIFY_MS });
    },
    [t, i18n.language],
  );
  useStorageLive(onOutcome);
  const canIncrease = user?.role !== undefined && user.role !== 'user';

  let content;
  if (isLoading)
    content = (
      <ListSkeleton testId="storage-loading" columns={[{ w: 36, h: 36 }, { w: 'flex', h: 12 }, { w: 120, h: 12 }, { w: 90, h: 24 }]} />
    );
  else if (isError)
    content = (
      <LoadError title={t('storage.load_error_title')} body={t('storage.load_error_body')} retrying={isRefetching} onRetry={() => void refetch()} />
    );
  else if (!disks?.length) content = <EmptyState icon={<IconDatabase size={30} />} title={t('storage.empty_title')} body={t('storage.empty_body')} />;
  else
    content = (
      <>
        <Summary disks={disks} />
        {!canIncrease && user && (
          <Text size="sm" c="dimmed" mb="sm" data-testid="storage-increase-ask">
            {t('storage.increase.ask')}
          </Text>
        )}
        <Paper withBorder radius="lg" style={{ overflow: 'hidden' }}>
          <CardTable minWidth={860} verticalSpacing="sm" horizontalSpacing="md" highlightOnHover data-testid="storage-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('storage.columns.disk')}</Table.Th>
                  <Table.Th>{t('storage.columns.desktops')}</Table.Th>
                  <Table.Th>{t('storage.columns.size')}</Table.Th>
                  <Table.Th>{t('storage.columns.usage')}</Table.Th>
                  <Table.Th>{t('storage.columns.last')}</Table.Th>
                  <Table.Th w={1} />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {disks.map((d) => (
                  <DiskRow key={d.id} d={d} me={user?.id ?? ''} canIncrease={canIncrease} onIncrease={setIncreasing} />
                ))}
              </Table.Tbody>
            </CardTable>
        </Paper>
      </>
    );

  return (
    <>
      <PageHeader title={t('storage.heading')} subtitle={t('storage.subheading')} />
      {content}
      <IncreaseModal disk={increasing} isAdmin={user?.role === 'admin'} onClose={() => setIncreasing(null)} />
    </>
  );
}

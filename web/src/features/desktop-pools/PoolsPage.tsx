import { useState } from 'react';
import { ActionIcon, Alert, Badge, Button, Card, Group, Menu, Modal, Progress, SimpleGrid, Skeleton, Stack, Text, ThemeIcon, Tooltip } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconAlertTriangle, IconDots, IconPencil, IconPlus, IconServer, IconStack2, IconTrash, IconCalendarEvent } from '@tabler/icons-react';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { TPool } from '@vdi/contracts';
import { EmptyState, LoadError } from '../../components/EmptyState';
import { PageHeader } from '../../components/PageHeader';
import { handleError, notifySuccess } from '../../lib/error-handler';
import { builtInText } from '../../lib/built-in-text';
import { sharingSummary } from '../../entities/sharing/SharingPicker';
import { useRefetchOnEvent } from '../../lib/refetch-on-event';
import { deletePool, POOLS_ADMIN_KEY, poolsQuery } from './api';
import { barParts } from './logic';
import { PoolFormModal } from './PoolForm';
import '../../i18n/areas/pools';

const COLORS = { in_use: 'indigo', kept: 'gray', prepared: 'teal', preparing: 'blue' } as const;
type Part = keyof typeof COLORS;
const PARTS: Part[] = ['prepared', 'preparing', 'in_use', 'kept'];

/** "3 prepared, 2 in use": the parts that are not zero (all zero: "nothing yet"). */
function partsText(t: (k: string, o?: Record<string, unknown>) => string, c: Record<Part, number>) {
  const parts = PARTS.filter((p) => c[p] > 0).map((p) => t(`pools_admin.counts.${p}`, { n: c[p] }));
  return parts.length ? parts.join(', ') : t('pools_admin.counts.none');
}

/** The pool's numbers now: a stacked bar against its maximum (the target marked), the counts, and a line per host. */
function PoolNumbers({ pool }: { pool: TPool }) {
  const { t } = useTranslation();
  const c = pool.counts;
  const bar = barParts(c, pool.max_desktops);
  return (
    <Stack gap={6}>
      <div style={{ position: 'relative' }}>
        <Progress.Root size={14} radius="sm" role="group" aria-label={t('pools_admin.card.bar', { name: pool.name })} data-testid="pool-bar">
          {(['in_use', 'kept', 'prepared', 'preparing'] as const).map((p) =>
            c[p] > 0 ? (
              <Tooltip key={p} label={t(`pools_admin.counts.${p}`, { n: c[p] })} withArrow>
                <Progress.Section value={bar[p]} color={COLORS[p]} striped={p === 'preparing'} animated={p === 'preparing'} aria-label={t(`pools_admin.counts.${p}`, { n: c[p] })} />
              </Tooltip>
            ) : null,
          )}
        </Progress.Root>
        {/* Where the prepared part aims to end now: a mark across the bar. */}
        {c.target > 0 && <div aria-hidden data-testid="pool-target-mark" style={{ position: 'absolute', top: -3, bottom: -3, left: `calc(${Math.min(bar.target, 100)}% - 1px)`, width: 2, borderRadius: 1, background: 'var(--mantine-color-text)' }} />}
      </div>
      <Group gap={6} wrap="wrap">
        {PARTS.map((p) => (
          <Badge key={p} variant="light" color={COLORS[p]} radius="sm" style={{ textTransform: 'none' }} data-testid={`pool-count-${p}`} data-value={c[p]}>
            {t(`pools_admin.counts.${p}`, { n: c[p] })}
          </Badge>
        ))}
        {c.waiting > 0 && (
          <Badge variant="light" color="orange" radius="sm" style={{ textTransform: 'none' }} data-testid="pool-count-waiting" data-value={c.waiting}>
            {t('pools_admin.counts.waiting', { n: c.waiting })}
          </Badge>
        )}
      </Group>
      <Text size="xs" c="dimmed" data-testid="pool-target">
        {t('pools_admin.card.target', { target: c.target, max: pool.max_desktops })}
      </Text>
      {c.by_host.map((h) => (
        <Group key={h.hypervisor} gap={6} wrap="nowrap" data-testid="pool-host">
          <IconServer size={14} aria-hidden style={{ flex: '0 0 auto' }} />
          <Text size="xs" lineClamp={1}>
            {t('pools_admin.card.host', { host: h.name, counts: partsText(t, { ...h, kept: 0 }) })}
          </Text>
        </Group>
      ))}
    </Stack>
  );
}

function PoolCard({ pool, onEdit, onDelete }: { pool: TPool; onEdit: () => void; onDelete: () => void }) {
  const { t } = useTranslation();
  const who = sharingSummary(t, pool.allowed);
  return (
    <Card withBorder radius="lg" padding="md" data-testid="pool-admin-card" data-name={pool.name} data-id={pool.id}>
      <Stack gap="sm">
        <Group gap="sm" wrap="nowrap" align="flex-start">
          <ThemeIcon size={40} radius="md" variant="light" color={pool.stalled ? 'orange' : 'indigo'}>
            <IconStack2 size={22} />
          </ThemeIcon>
          <Stack gap={2} style={{ minWidth: 0, flex: 1 }}>
            <Text fw={650} lineClamp={1} data-testid="pool-admin-name">
              {builtInText(t, pool.name)}
            </Text>
            <Text size="xs" c="dimmed" lineClamp={1}>
              {t('pools_admin.card.template', { template: builtInText(t, pool.template_name) || '—' })}
            </Text>
          </Stack>
          <Menu position="bottom-end" withinPortal>
            <Menu.Target>
              <ActionIcon variant="subtle" color="gray" aria-label={t('pools_admin.card.actions', { name: pool.name })} data-testid="pool-actions">
                <IconDots size={18} />
              </ActionIcon>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item leftSection={<IconPencil size={16} />} onClick={onEdit} data-testid="pool-edit">
                {t('pools_admin.card.edit')}
              </Menu.Item>
              {pool.needs_booking && (
                <Menu.Item component={Link} to={`/booking/pool/${encodeURIComponent(pool.id)}`} leftSection={<IconCalendarEvent size={16} />} data-testid="pool-book">
                  {t('pools_admin.card.book')}
                </Menu.Item>
              )}
              <Menu.Item color="red" leftSection={<IconTrash size={16} />} onClick={onDelete} data-testid="pool-delete">
                {t('pools_admin.card.delete')}
              </Menu.Item>
            </Menu.Dropdown>
          </Menu>
        </Group>
        <Group gap={6} wrap="wrap">
          <Badge variant="light" color={pool.persistent ? 'grape' : 'cyan'} radius="sm" style={{ textTransform: 'none' }} data-testid="pool-kind">
            {t(pool.persistent ? 'pools_admin.kind.persistent' : 'pools_admin.kind.fresh')}
          </Badge>
          <Badge variant="light" color={who.kind === 'private' ? 'gray' : 'teal'} radius="sm" style={{ textTransform: 'none' }} data-testid="pool-who">
            {who.text}
          </Badge>
          {pool.stalled && (
            <Badge variant="filled" color="orange" radius="sm" style={{ textTransform: 'none' }} leftSection={<IconAlertTriangle size={12} />} data-testid="pool-stalled" data-reason={pool.stalled}>
              {t(`pools_admin.stalled.${pool.stalled}`)}
            </Badge>
          )}
        </Group>
        <PoolNumbers pool={pool} />
        <Text size="xs" c="dimmed" lineClamp={1}>
          {t('pools_admin.card.owner', { name: pool.owner_name })}
        </Text>
      </Stack>
    </Card>
  );
}

/** The delete confirmation: what goes (desktops not given to anybody) and what stays (those people hold). */
function DeletePoolModal({ pool, onClose }: { pool: TPool | null; onClose: () => void }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: (p: TPool) => deletePool(p.id),
    onSuccess: (_a, p) => {
      notifySuccess(t('pools_admin.delete.done', { name: p.name }));
      void qc.invalidateQueries({ queryKey: POOLS_ADMIN_KEY });
      onClose();
    },
    onError: (err) => handleError(err),
  });
  const c = pool?.counts;
  return (
    <Modal opened={pool !== null} onClose={() => !remove.isPending && onClose()} title={t('pools_admin.delete.title')} centered radius="lg" data-testid="pool-delete-confirm">
      {pool && c && (
        <Stack gap="md">
          <Text size="sm" fw={600}>
            {builtInText(t, pool.name)}
          </Text>
          <Alert color="red" variant="light" icon={<IconTrash size={16} />} p="xs">
            <Text size="sm">{t('pools_admin.delete.removed', { n: c.prepared + c.preparing })}</Text>
          </Alert>
          <Text size="sm" c="dimmed">
            {t('pools_admin.delete.kept', { n: c.in_use + c.kept })}
          </Text>
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={onClose} disabled={remove.isPending}>
              {t('common.cancel')}
            </Button>
            <Button color="red" leftSection={<IconTrash size={16} />} loading={remove.isPending} onClick={() => remove.mutate(pool)} data-testid="pool-delete-confirm-button">
              {t('pools_admin.delete.confirm')}
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}

/**
 * Desktop pools (issue 30), at /pools for teachers, managers and admins and in the console: the pools the caller
 * manages with their numbers live (read again at each desktop_pool_changed); a pool made, changed or deleted in a dialog.
 */
export default function PoolsPage() {
  const { t } = useTranslation();
  const pools = useQuery(poolsQuery);
  useRefetchOnEvent('desktop_pool_changed', POOLS_ADMIN_KEY);
  const [editing, setEditing] = useState<TPool | 'new' | null>(null);
  const [deleting, setDeleting] = useState<TPool | null>(null);
  const list = pools.data ?? [];
  const newButton = (
    <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')} data-testid="pools-new">
      {t('pools_admin.new')}
    </Button>
  );
  return (
    <>
      <PageHeader title={t('pools_admin.heading')} subtitle={t('pools_admin.subheading')} actions={list.length ? newButton : undefined} />
      {pools.isLoading ? (
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg">
          <Skeleton h={220} radius="lg" />
          <Skeleton h={220} radius="lg" />
        </SimpleGrid>
      ) : pools.isError && !pools.data ? (
        <LoadError title={t('pools_admin.load_error')} retrying={pools.isFetching} onRetry={() => void pools.refetch()} testId="pools-load-error" />
      ) : !list.length ? (
        <EmptyState icon={<IconStack2 size={30} />} title={t('pools_admin.empty_title')} body={t('pools_admin.empty_body')} action={newButton} />
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg" data-testid="pools-admin">
          {list.map((p) => (
            <PoolCard key={p.id} pool={p} onEdit={() => setEditing(p)} onDelete={() => setDeleting(p)} />
          ))}
        </SimpleGrid>
      )}
      <PoolFormModal pool={editing} onClose={() => setEditing(null)} />
      <DeletePoolModal pool={deleting} onClose={() => setDeleting(null)} />
    </>
  );
}

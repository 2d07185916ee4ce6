import { useEffect, useState } from 'react';
import { Badge, Button, Card, Group, SimpleGrid, Stack, Text, ThemeIcon } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { IconBolt, IconClockHour4, IconStack2 } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ZPoolTakeAnswer, type TUserPool, type TViewer } from '@vdi/contracts';
import { api } from '../../lib/api';
import { onEvent } from '../../lib/socket';
import { handleError } from '../../lib/error-handler';
import { useRefetchOnEvent } from '../../lib/refetch-on-event';
import { DESKTOPS_KEY, fetchViewer, USER_POOLS_KEY, userPoolsQuery } from '../../entities/desktop/api';
import { openViewer } from '../../entities/viewer/open';
import { builtInText } from '../../lib/built-in-text';
import classes from './DesktopsPage.module.css';
import '../../i18n/areas/content';
/** The browser viewer a pool's desktop opens in (the pool allows it): VNC first. */
const browserViewer = (p: TUserPool): TViewer | null => (p.viewers.includes('browser-vnc') ? 'browser-vnc' : p.viewers.includes('browser-rdp') ? 'browser-rdp' : null);

/** A pool a person may take a desktop from: ready (one click opens a prepared desktop), preparing, or full; their place while they wait. */
function PoolCard({ pool }: { pool: TUserPool }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [busy, setBusy] = useState(false);
  const viewer = browserViewer(pool);
  const take = async () => {
    if (!viewer) return;
    setBusy(true);
    try {
      // The viewer's tab opens at the click (popup blockers); a place in the queue closes it again.
      await openViewer(viewer, async () => {
        // (its ticket comes with the desktop; asked apart when it could not be given then, which says why)
        const answer = await api.post(`/desktop-pools/${encodeURIComponent(pool.id)}/take`, { viewer }, ZPoolTakeAnswer);
        if (answer.kind === 'queued') throw new QueuedError();
        void qc.invalidateQueries({ queryKey: DESKTOPS_KEY });
        return answer.viewer ?? fetchViewer(answer.desktop_id, viewer);
      });
    } catch (err) {
      if (!(err instanceof QueuedError)) handleError(err);
    } finally {
      setBusy(false);
      void qc.invalidateQueries({ queryKey: USER_POOLS_KEY });
    }
  };
  const waiting = pool.place !== null;
  const badge = waiting
    ? { color: 'orange', text: t('desktop_pools.place', { place: pool.place, seconds: pool.wait_seconds ?? 0 }) }
    : pool.state === 'ready'
      ? { color: 'teal', text: t('desktop_pools.ready', { n: pool.prepared }) }
      : pool.state === 'full'
        ? { color: 'gray', text: t('desktop_pools.full') }
        : { color: 'blue', text: t('desktop_pools.preparing') };
  return (
    <Card withBorder radius="lg" padding="md" className={classes.card} data-testid="pool-card" data-name={pool.name} data-state={waiting ? 'waiting' : pool.state}>
      <Stack gap="sm">
        <Group gap="sm" wrap="nowrap" align="flex-start">
          <ThemeIcon size={40} radius="md" variant="light" color="indigo">
            <IconStack2 size={22} />
          </ThemeIcon>
          <Stack gap={2} style={{ minWidth: 0, flex: 1 }}>
            <Text fw={650} lineClamp={1} data-testid="pool-name">
              {builtInText(t, pool.name)}
            </Text>
            <Text size="xs" c="dimmed" lineClamp={1}>
              {t('desktop_pools.from_template', { template: builtInText(t, pool.template_name) })}
            </Text>
          </Stack>
        </Group>
        <Text size="sm" c="dimmed" lineClamp={2} mih={40}>
          {builtInText(t, pool.description) || t(pool.persistent ? 'desktop_pools.persistent_hint' : 'desktop_pools.nonpersistent_hint')}
        </Text>
        <Group justify="space-between" gap="xs">
          <Badge variant="light" color={badge.color} leftSection={waiting ? <IconClockHour4 size={12} /> : <IconBolt size={12} />} data-testid="pool-state">
            {badge.text}
          </Badge>
          <Button size="sm" onClick={() => void take()} loading={busy} disabled={!viewer || waiting || pool.state === 'full'} data-testid="pool-take">
            {t('desktop_pools.open')}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

class QueuedError extends Error {}

/** The pools of the desktops screen: those the person may take a desktop from and holds none of yet. */
export function PoolCards() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const { data } = useQuery(userPoolsQuery);
  // Live: a pool's numbers changed (prepared, the queue), or it was shared, changed or deleted.
  useRefetchOnEvent('desktop_pool_changed', USER_POOLS_KEY);
  // A desktop given while the person waited: the list learns it, and a notice offers to open it (no tab opens by itself).
  useEffect(
    () =>
      onEvent('desktop_pool_given', ({ pool_id, desktop_id }) => {
        void qc.invalidateQueries({ queryKey: USER_POOLS_KEY });
        void qc.invalidateQueries({ queryKey: DESKTOPS_KEY });
        const pool = data?.find((p) => p.id === pool_id);
        const viewer = pool ? browserViewer(pool) : 'browser-vnc';
        notifications.show({
          color: 'teal',
          title: t('desktop_pools.given_title'),
          message: (
            <Button size="xs" mt={4} onClick={() => void openViewer(viewer ?? 'browser-vnc', () => fetchViewer(desktop_id, viewer ?? 'browser-vnc')).catch(handleError)} data-testid="pool-given-open">
              {t('desktop_pools.open')}
            </Button>
          ),
          autoClose: false,
        });
      }),
    [qc, data, t],
  );
  const shown = (data ?? []).filter((p) => p.state !== 'mine');
  if (!shown.length) return null;
  return (
    <Stack gap="xs" mb="lg" data-testid="pools">
      <Text fw={600} size="sm" c="dimmed" tt="uppercase">
        {t('desktop_pools.heading')}
      </Text>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="lg">
        {shown.map((p) => (
          <PoolCard key={p.id} pool={p} />
        ))}
      </SimpleGrid>
    </Stack>
  );
}

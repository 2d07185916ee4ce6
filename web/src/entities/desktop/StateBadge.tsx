import { useEffect, useState } from 'react';
import { Badge, Group, Loader, Text, Tooltip } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { stateView } from './logic';

/** Whole seconds from now until `at` (never below 0). */
export const secondsUntil = (at: string, now = Date.now()) => Math.max(0, Math.ceil((Date.parse(at) - now) / 1000));

/**
 * The time left before a shutting-down desktop becomes a forced stop (`force_stop_at`, the
 * server's moment), counting down each second. A timer, not a live region: it would talk every second.
 * On its own background: on a card it sits over the desktop's screen.
 */
export function ForceStopCountdown({ at, size = 'sm' }: { at: string; size?: 'xs' | 'sm' }) {
  const { t } = useTranslation();
  const [left, setLeft] = useState(() => secondsUntil(at));
  useEffect(() => {
    setLeft(secondsUntil(at));
    const timer = setInterval(() => setLeft(secondsUntil(at)), 1000);
    return () => clearInterval(timer);
  }, [at]);
  return (
    <Text component="span" role="timer" size={size} c="dimmed" data-testid="force-stop-countdown" data-seconds={left} style={{ whiteSpace: 'nowrap', background: 'var(--mantine-color-body)', borderRadius: 'var(--mantine-radius-sm)', padding: '0 6px' }}>
      {left > 0 ? t('desktops.force_stop_in', { count: left }) : t('desktops.force_stop_now')}
    </Text>
  );
}

/**
 * The desktop's state, coloured; states outside the table show as working, with a spinner.
 * Shutting down with `forceStopAt` (the desktop's `force_stop_at`): the countdown to the forced stop beside it.
 */
export function StateBadge({ status, size = 'md', forceStopAt }: { status: string; size?: 'sm' | 'md' | 'lg'; forceStopAt?: string | null }) {
  const { t } = useTranslation();
  const v = stateView(status);
  const badge = (
    <Badge
      color={v.color}
      variant={v.shown === 'started' ? 'filled' : 'light'}
      size={size}
      radius="sm"
      leftSection={v.busy ? <Loader size={10} color={v.shown === 'started' ? 'white' : v.color} /> : null}
      data-testid="desktop-state"
      data-state={v.state}
      style={{ flex: '0 0 auto', maxWidth: 'none' }}
      styles={{ label: { overflow: 'visible' } }}
    >
      {t(`desktops.states.${v.shown}`)}
    </Badge>
  );
  const shown =
    v.shown !== v.state ? (
      <Tooltip label={t(`desktops.states_detail.${v.state}`, { defaultValue: t('desktops.states.working') })} withArrow>
        {badge}
      </Tooltip>
    ) : (
      badge
    );
  if (v.state !== 'shutting-down' || !forceStopAt) return shown;
  return (
    <Group gap={6} wrap="wrap" style={{ flex: '0 1 auto', minWidth: 0 }}>
      {shown}
      <ForceStopCountdown at={forceStopAt} size={size === 'sm' ? 'xs' : 'sm'} />
    </Group>
  );
}

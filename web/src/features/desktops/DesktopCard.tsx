import { Badge, Card, Group, Stack, Text, Tooltip } from '@mantine/core';
import { IconAlertTriangle, IconCalendarEvent, IconClockPause, IconCpu, IconDeviceSdCard, IconHourglassHigh, IconNetwork, IconServer } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TDesktop } from '@vdi/contracts';
import { MainActionButton, MoreMenu, OpenButton, StartAndOpenButton } from '../../entities/desktop/DesktopActions';
import { BookLink } from '../../entities/booking/BookLink';
import { useDesktopControls } from '../../entities/desktop/controls';
import { formatLocal, memoryLabel } from '../../entities/desktop/logic';
import { StateBadge } from '../../entities/desktop/StateBadge';
import { Thumbnail } from './Thumbnail';
import classes from './DesktopsPage.module.css';
import { builtInText } from '../../lib/built-in-text';
import { useQuery } from '@tanstack/react-query';
import { configQuery } from '../../lib/queries';

/** The host a desktop runs on, when there is more than one to tell apart (the server names it only while it runs). */
export function useRunsOn(d: TDesktop): string | null {
  const { t } = useTranslation();
  const { data: config } = useQuery(configQuery);
  return config?.multiple_hypervisors && d.hypervisor ? builtInText(t, d.hypervisor) : null;
}

/** Temporary, queue position, address on the guest network (or why there is none), automatic shutdown, next booking. */
/** A line that says why something did not go as asked (the desktop's `current_action`). */
function Warning({ testId, color, text }: { testId: string; color: 'orange' | 'red'; text: string }) {
  return (
    <Group gap={6} wrap="nowrap" align="flex-start" data-testid={testId}>
      <IconAlertTriangle size={14} color={`var(--mantine-color-${color}-6)`} style={{ flex: '0 0 auto', marginTop: 2 }} />
      <Text size="xs" c={`${color}.7`}>
        {text}
      </Text>
    </Group>
  );
}

export function DesktopNotices({ d, queue, inline = false }: { d: TDesktop; queue?: number; inline?: boolean }) {
  const { t } = useTranslation();
  const shutdown = formatLocal(d.scheduled.shutdown);
  const bookingStart = formatLocal(d.next_booking_start);
  const bookingEnd = formatLocal(d.next_booking_end);
  const badges = (
    <>
      {d.type === 'nonpersistent' && (
        <Tooltip label={t('desktops.temporary_hint')} withArrow>
          <Badge variant="light" color="violet" size="sm" radius="sm" leftSection={<IconHourglassHigh size={12} />} data-testid="desktop-temporary">
            {t('desktops.temporary')}
          </Badge>
        </Tooltip>
      )}
      {queue !== undefined && queue > 0 && (
        <Badge variant="light" color="orange" size="sm" radius="sm" data-testid="desktop-queue">
          {t('desktops.queue_position', { position: queue })}
        </Badge>
      )}
    </>
  );
  const noAddress = d.current_action === 'guest_ip_timeout';
  /** A start that failed for a reason the owner should read (the catalogue's code), shown on the card. */
  const startRefused = d.current_action === 'hypervisor_guest_network_missing' || d.current_action === 'storage_pool_full' ? d.current_action : null;
  const host = useRunsOn(d);
  const lines = (
    <>
      {host && (
        <Group gap={6} wrap="nowrap" data-testid="desktop-host">
          <IconServer size={14} color="var(--mantine-color-dimmed)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="dimmed" lineClamp={1}>
            {t('desktops.runs_on', { host })}
          </Text>
        </Group>
      )}
      {d.ip && (
        <Group gap={6} wrap="nowrap" data-testid="desktop-ip">
          <IconNetwork size={14} color="var(--mantine-color-dimmed)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="dimmed">
            {t('desktops.address', { ip: d.ip })}
          </Text>
        </Group>
      )}
      {noAddress && <Warning testId="desktop-no-address" color="orange" text={t('errors.guest_ip_timeout')} />}
      {startRefused && <Warning testId="desktop-host-not-prepared" color="red" text={t(`errors.${startRefused}`)} />}
      {shutdown && (
        <Group gap={6} wrap="nowrap" data-testid="desktop-shutdown">
          <IconClockPause size={14} color="var(--mantine-color-orange-6)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="orange">
            {t('desktops.auto_shutdown', { date: shutdown })}
          </Text>
        </Group>
      )}
      {bookingStart && (
        <Group gap={6} wrap="nowrap" data-testid="desktop-booking">
          <IconCalendarEvent size={14} color="var(--mantine-color-blue-6)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="dimmed">
            {bookingEnd ? t('desktops.next_booking_range', { start: bookingStart, end: bookingEnd }) : t('desktops.next_booking', { start: bookingStart })}
          </Text>
          <BookLink d={d} />
        </Group>
      )}
      {!bookingStart && d.needs_booking && (
        <Group gap={6} wrap="nowrap">
          <IconCalendarEvent size={14} color="var(--mantine-color-gray-6)" style={{ flex: '0 0 auto' }} />
          <Text size="xs" c="dimmed">
            {t('desktops.needs_booking')}
          </Text>
          <BookLink d={d} />
        </Group>
      )}
    </>
  );
  const hasBadges = d.type === 'nonpersistent' || (queue !== undefined && queue > 0);
  if (!hasBadges && !host && !d.ip && !noAddress && !startRefused && !shutdown && !bookingStart && !d.needs_booking) return null;
  return (
    <Stack gap={inline ? 4 : 6}>
      {hasBadges && <Group gap={6}>{badges}</Group>}
      {lines}
    </Stack>
  );
}

export function Hardware({ d }: { d: TDesktop }) {
  const { t, i18n } = useTranslation();
  return (
    <Group gap="md" wrap="nowrap" data-testid="desktop-hardware">
      <Group gap={4} wrap="nowrap">
        <IconCpu size={14} color="var(--mantine-color-dimmed)" />
        <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
          {t('desktops.vcpus', { count: d.vcpus })}
        </Text>
      </Group>
      <Group gap={4} wrap="nowrap">
        <IconDeviceSdCard size={14} color="var(--mantine-color-dimmed)" />
        <Text size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
          {t(`desktops.${memoryLabel(d.memory, i18n.language).key}`, { value: memoryLabel(d.memory, i18n.language).value })}
        </Text>
      </Group>
    </Group>
  );
}

export function DesktopCard({ d, queue, onDirectLink }: { d: TDesktop; queue?: number; onDirectLink: (d: TDesktop) => void }) {
  const { t } = useTranslation();
  const c = useDesktopControls(d);
  return (
    <Card withBorder radius="lg" padding={0} className={classes.card} data-testid="desktop-card" data-desktop-id={d.id} data-name={d.name} data-state={c.state}>
      <div className={classes.thumbWrap}>
        <Thumbnail d={d} />
        <div className={classes.thumbBadge}>
          <StateBadge status={d.state} forceStopAt={d.force_stop_at} />
        </div>
      </div>
      <Stack gap={8} p="md" className={classes.cardBody}>
        <Group justify="space-between" wrap="nowrap" gap="xs" align="flex-start">
          <Text fw={650} size="md" lineClamp={1} title={builtInText(t, d.name)} data-testid="desktop-name">
            {builtInText(t, d.name)}
          </Text>
          <MoreMenu c={c} d={d} onDirectLink={onDirectLink} />
        </Group>
        <Text size="sm" c="dimmed" lineClamp={2} mih={40} mt={-8}>
          {builtInText(t, d.description) || t('desktops.no_description')}
        </Text>
        <DesktopNotices d={d} queue={queue} />
        <Hardware d={d} />
      </Stack>
      <Group className={classes.cardFooter} justify="space-between" gap="xs" wrap="wrap" p="md" pt="sm">
        <MainActionButton c={c} />
        <StartAndOpenButton c={c} />
        <OpenButton c={c} grow />
        {!c.action && !c.viewer && (
          <Text size="xs" c="dimmed" data-testid="desktop-wait">
            {t(c.state === 'unknown' ? 'desktops.unavailable_hint' : 'desktops.wait_hint')}
          </Text>
        )}
      </Group>
    </Card>
  );
}


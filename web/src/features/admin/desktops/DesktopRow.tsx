// A desktop's pieces on the console's list: its uptime, its menu of actions and its card at phone width.
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { ActionIcon, Anchor, Checkbox, Group, Menu, Paper, Text } from '@mantine/core';
import { IconDots, IconHeadset, IconPlayerPlay, IconPlayerStop, IconPower, IconRefresh, IconTrash, IconTrashX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { GUEST_UP, ON_HYPERVISOR, statusIn, VIEWABLE, type TAdminDesktop, type TAdminDesktopAction } from '@vdi/contracts';
import { StateBadge } from '../../../entities/desktop/StateBadge';
import { formatBytes, formatDuration } from '../../../entities/format';
import { builtInText } from '../../../lib/built-in-text';
import '../../../i18n/areas/admin-desktops';

/** The clock, ticking every second while the page is open (uptimes). */
export function useNow() {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, []);
  return now;
}

export function Uptime({ started, now }: { started: string | null; now: number }) {
  const { t } = useTranslation();
  if (!started) return <Text size="sm" c="dimmed">{t('admin_desktops.desktops.not_running')}</Text>;
  const seconds = Math.max(0, (now - Date.parse(started)) / 1000);
  const days = Math.floor(seconds / 86_400);
  const text = days > 0 ? `${t('admin_desktops.desktops.days', { count: days })} ${formatDuration(seconds % 86_400)}` : formatDuration(seconds);
  return (
    <Text size="sm" ff="monospace" style={{ whiteSpace: 'nowrap' }} data-testid="desktop-uptime">
      {text}
    </Text>
  );
}

/** The desktop's name, a link to its page in the console. */
export function DesktopLink({ d }: { d: Pick<TAdminDesktop, 'id' | 'name'> }) {
  const { t } = useTranslation();
  return (
    <Anchor component={Link} to={`/isard-admin/desktops/${encodeURIComponent(d.id)}`} size="sm" fw={600} truncate="end" c="var(--mantine-color-text)" underline="hover" data-testid="desktop-open">
      {builtInText(t, d.name)}
    </Anchor>
  );
}

/** The actions a desktop offers in its state (start, stop, force stop, reset, the screen as support, delete). */
export function DesktopMenu({ d, ask, onSupport }: { d: TAdminDesktop; ask: (a: TAdminDesktopAction, rows: TAdminDesktop[]) => void; onSupport: (d: TAdminDesktop) => void }) {
  const { t } = useTranslation();
  const running = statusIn(ON_HYPERVISOR, d.status);
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <ActionIcon variant="subtle" color="gray" aria-label={t('admin_desktops.common.actions', { name: builtInText(t, d.name) })} data-testid="desktop-actions">
          <IconDots size={16} />
        </ActionIcon>
      </Menu.Target>
      <Menu.Dropdown>
        {d.status === 'Stopped' && (
          <Menu.Item leftSection={<IconPlayerPlay size={14} />} onClick={() => ask('start', [d])} data-testid="desktop-start">
            {t('admin_desktops.desktops.start')}
          </Menu.Item>
        )}
        {running && (
          <Menu.Item leftSection={<IconPlayerStop size={14} />} onClick={() => ask('stop', [d])} data-testid="desktop-stop">
            {t('admin_desktops.desktops.stop')}
          </Menu.Item>
        )}
        {(running || d.status === 'Starting') && (
          <Menu.Item color="orange" leftSection={<IconPower size={14} />} onClick={() => ask('force_stop', [d])} data-testid="desktop-force-stop">
            {t('admin_desktops.desktops.force_stop')}
          </Menu.Item>
        )}
        {statusIn(GUEST_UP, d.status) && (
          <Menu.Item leftSection={<IconRefresh size={14} />} onClick={() => ask('reset', [d])} data-testid="desktop-reset">
            {t('admin_desktops.desktops.reset')}
          </Menu.Item>
        )}
        {statusIn(VIEWABLE, d.status) && d.viewers.includes('browser-vnc') && (
          <Menu.Item leftSection={<IconHeadset size={14} />} onClick={() => onSupport(d)} data-testid="desktop-support">
            {t('admin_desktops.desktops.support')}
          </Menu.Item>
        )}
        <Menu.Divider />
        <Menu.Item color="red" leftSection={<IconTrash size={14} />} onClick={() => ask('delete', [d])} data-testid="desktop-delete">
          {t('admin_desktops.desktops.delete')}
        </Menu.Item>
        <Menu.Item color="red" leftSection={<IconTrashX size={14} />} onClick={() => ask('delete_permanent', [d])} data-testid="desktop-delete-permanent">
          {t('admin_desktops.desktops.delete_permanent')}
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

/** A desktop as a card (phone width): the same facts and actions as a table row. */
export function DesktopCard({ d, now, selected, onToggle, ask, onSupport, isAdmin }: {
  d: TAdminDesktop; now: number; selected: boolean; onToggle: () => void; isAdmin: boolean;
  ask: (a: TAdminDesktopAction, rows: TAdminDesktop[]) => void; onSupport: (d: TAdminDesktop) => void;
}) {
  const { t, i18n } = useTranslation();
  return (
    <Paper withBorder radius="lg" p="sm" data-testid="desktop-row" data-name={d.name} data-owner={d.username} data-status={d.status} bg={selected ? 'var(--mantine-color-indigo-light)' : undefined}>
      <Group justify="space-between" wrap="nowrap" align="flex-start">
        <Group gap="sm" wrap="nowrap" align="flex-start" style={{ minWidth: 0 }}>
          <Checkbox mt={2} aria-label={t('admin_desktops.common.select', { name: builtInText(t, d.name) })} checked={selected} onChange={onToggle} data-testid="desktop-select" />
          <div style={{ minWidth: 0 }}>
            <DesktopLink d={d} />
            <Text size="xs" c="dimmed" truncate="end">
              {d.user_name} · {d.username} · {builtInText(t, isAdmin ? d.category_name : d.group_name)}
            </Text>
          </div>
        </Group>
        <DesktopMenu d={d} ask={ask} onSupport={onSupport} />
      </Group>
      <Group gap="xs" mt="xs" wrap="wrap">
        <StateBadge status={d.status} size="sm" forceStopAt={d.force_stop_at} />
        <Uptime started={d.started} now={now} />
        <Text size="xs" c="dimmed">
          {[builtInText(t, d.hypervisor), formatBytes(d.memory_mb * 1024 * 1024, i18n.language), `${d.vcpus} ${t('admin_desktops.desktops.vcpus')}`, formatBytes(d.disk_size, i18n.language)].filter(Boolean).join(' · ')}
        </Text>
      </Group>
    </Paper>
  );
}

import { useRef, type ReactNode } from 'react';
import { ActionIcon, Button, Group, Menu, Tooltip } from '@mantine/core';
import {
  IconCheck,
  IconChevronDown,
  IconDots,
  IconDownload,
  IconHelp,
  IconLink,
  IconPlayerPlay,
  IconPlayerStop,
  IconPower,
  IconRefresh,
  IconRefreshAlert,
  IconRotateClockwise,
  IconTrash,
  IconWorld,
  IconX,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { desktopState, type TDesktop, type TDesktopAction, type TViewer } from '@vdi/contracts';
import { useRecreateDisk } from '../domain/recreate';
import { isBrowserViewer } from '../viewer/open';
import { DesktopMenuItems } from '../domain/DesktopMenuItems';
import { BookMenuItem } from '../booking/BookLink';
import { BastionMenuItem } from '../vpn-bastion/BastionMenuItem';
import type { DesktopControls } from './controls';
import { builtInText } from '../../lib/built-in-text';
import '../../i18n/areas/content';

const ACTION_LOOK: Record<TDesktopAction, { icon: ReactNode; color: string; variant: 'filled' | 'light' }> = {
  start: { icon: <IconPlayerPlay size={16} />, color: 'teal', variant: 'filled' },
  create: { icon: <IconPlayerPlay size={16} />, color: 'teal', variant: 'filled' },
  stop: { icon: <IconPlayerStop size={16} />, color: 'red', variant: 'light' },
  forceStop: { icon: <IconPower size={16} />, color: 'red', variant: 'filled' },
  retry: { icon: <IconRefresh size={16} />, color: 'orange', variant: 'light' },
  delete: { icon: <IconTrash size={16} />, color: 'red', variant: 'light' },
  cancel: { icon: <IconX size={16} />, color: 'grape', variant: 'light' },
};

export const viewerIcon = (v: TViewer, size = 16) => (isBrowserViewer(v) ? <IconWorld size={size} /> : <IconDownload size={size} />);

/** The state's action (offeredAction), as a button. */
export function MainActionButton({ c, size = 'sm' }: { c: DesktopControls; size?: 'xs' | 'sm' }) {
  const { t } = useTranslation();
  if (!c.action) return null;
  const look = ACTION_LOOK[c.action];
  return (
    <Button
      size={size}
      color={look.color}
      variant={look.variant}
      leftSection={look.icon}
      loading={c.busy}
      disabled={c.startingToOpen}
      onClick={c.runMain}
      data-testid={`desktop-action-${c.action}`}
    >
      {t(`desktops.actions.${c.action}`)}
    </Button>
  );
}

/** "Start and open" on a desktop at rest that offers the browser viewer: one click to its screen. Compact: its icon, named by a tooltip. */
export function StartAndOpenButton({ c, size = 'sm', compact = false }: { c: DesktopControls; size?: 'xs' | 'sm'; compact?: boolean }) {
  const { t } = useTranslation();
  if (!c.canStartAndOpen) return null;
  const label = t('desktops.start_and_open');
  return (
    <Tooltip label={t('desktops.start_and_open_hint')} withArrow multiline w={260} openDelay={400}>
      {compact ? (
        <ActionIcon size={size === 'xs' ? 'md' : 'lg'} variant="light" color="teal" loading={c.startingToOpen} disabled={c.busy} onClick={c.startAndOpen} aria-label={label} data-testid="desktop-start-open">
          <IconWorld size={16} />
        </ActionIcon>
      ) : (
        <Button size={size} variant="light" color="teal" leftSection={<IconWorld size={16} />} loading={c.startingToOpen} disabled={c.busy} onClick={c.startAndOpen} data-testid="desktop-start-open">
          {label}
        </Button>
      )}
    </Tooltip>
  );
}

/** "Open" with the remembered viewer, and a menu of every viewer the desktop offers. */
export function OpenButton({ c, size = 'sm', compact = false, grow = false }: { c: DesktopControls; size?: 'xs' | 'sm'; compact?: boolean; grow?: boolean }) {
  const { t } = useTranslation();
  if (!c.viewer) return null;
  const main = c.viewer;
  return (
    <Button.Group style={grow ? { flex: '1 1 200px', maxWidth: '100%' } : undefined}>
      <Tooltip label={t(`desktops.viewers.${main}`)} disabled={!compact} withArrow>
        <Button
          size={size}
          variant="filled"
          leftSection={viewerIcon(main)}
          loading={c.opening === main}
          onClick={() => c.open(main)}
          style={grow ? { flex: 1 } : undefined}
          data-testid="desktop-open"
          data-viewer={main}
        >
          {t(compact ? 'desktops.open' : `desktops.open_with.${main}`)}
        </Button>
      </Tooltip>
      <Menu position="bottom-end" shadow="md" width={260} withinPortal>
        <Menu.Target>
          <Button size={size} variant="filled" px={6} aria-label={t('desktops.choose_viewer')} data-testid="desktop-viewers" style={{ borderLeft: '1px solid rgba(255,255,255,0.35)' }}>
            <IconChevronDown size={14} />
          </Button>
        </Menu.Target>
        <Menu.Dropdown>
          <Menu.Label>{t('desktops.open_with_label')}</Menu.Label>
          {c.viewers.map((v) => (
            <Menu.Item
              key={v}
              leftSection={viewerIcon(v)}
              rightSection={v === main ? <IconCheck size={14} /> : null}
              onClick={() => c.open(v, true)}
              data-testid={`viewer-option-${v}`}
            >
              {t(`desktops.viewers.${v}`)}
            </Menu.Item>
          ))}
          <Menu.Divider />
          <Menu.Item component={Link} to="/viewers" leftSection={<IconHelp size={16} />} data-testid="viewer-help">
            {t('nav.viewers_help')}
          </Menu.Item>
        </Menu.Dropdown>
      </Menu>
    </Button.Group>
  );
}

/**
 * "Recreate" for a deployment's desktop whose owner lets its users start over (the `recreate`
 * permission): stopped only, after a confirmation — the disk is made afresh from the template.
 */
function RecreateMenuItem({ d }: { d: TDesktop }) {
  const { t } = useTranslation();
  const recreate = useRecreateDisk(d);
  if (!d.tag || !d.permissions.includes('recreate')) return null;
  const stopped = desktopState(d.state) === 'stopped';
  return (
    <Menu.Item leftSection={<IconRefreshAlert size={16} />} disabled={!stopped || recreate.pending} title={stopped ? undefined : t('domain_edit.must_stop')} onClick={recreate.confirm} data-testid="desktop-recreate">
      {t('domain_edit.recreate')}
    </Menu.Item>
  );
}

/** Reset, direct link, recreate (deployments that allow it) and delete. */
export function MoreMenu({ c, d, onDirectLink }: { c: DesktopControls; d: TDesktop; onDirectLink: (d: TDesktop) => void }) {
  const { t } = useTranslation();
  const button = useRef<HTMLButtonElement>(null);
  return (
    <Menu position="bottom-end" shadow="md" width={220} withinPortal>
      <Menu.Target>
        <ActionIcon ref={button} variant="subtle" color="gray" size="lg" aria-label={t('desktops.more_actions', { name: builtInText(t, d.name) })} data-testid="desktop-menu">
          <IconDots size={18} />
        </ActionIcon>
      </Menu.Target>
      {/* The focus on the menu's button before an item acts: a dialog the item opens gives the focus back to what held it
          when it opened, and the item itself is gone by then (whether the menu's own return came first was a race). */}
      <Menu.Dropdown onClickCapture={() => button.current?.focus({ preventScroll: true })}>
        <Menu.Item leftSection={<IconRotateClockwise size={16} />} disabled={!c.canReset} onClick={c.reset} data-testid="desktop-reset">
          {t('desktops.actions.reset')}
        </Menu.Item>
        <Menu.Item leftSection={<IconLink size={16} />} onClick={() => onDirectLink(d)} data-testid="desktop-direct-link">
          {t('desktops.actions.direct_link')}
        </Menu.Item>
        <BookMenuItem d={d} />
        <BastionMenuItem d={d} />
        <DesktopMenuItems d={d} />
        <RecreateMenuItem d={d} />
        <Menu.Divider />
        <Menu.Item color="red" leftSection={<IconTrash size={16} />} disabled={!c.canDelete} onClick={c.remove} data-testid="desktop-delete">
          {t('desktops.actions.delete')}
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

export function ActionsRow({ c, d, onDirectLink, compact = false }: { c: DesktopControls; d: TDesktop; onDirectLink: (d: TDesktop) => void; compact?: boolean }) {
  return (
    <Group gap="xs" wrap="nowrap" justify="flex-end">
      <MainActionButton c={c} size={compact ? 'xs' : 'sm'} />
      <StartAndOpenButton c={c} size={compact ? 'xs' : 'sm'} compact={compact} />
      <OpenButton c={c} size={compact ? 'xs' : 'sm'} compact={compact} />
      <MoreMenu c={c} d={d} onDirectLink={onDirectLink} />
    </Group>
  );
}

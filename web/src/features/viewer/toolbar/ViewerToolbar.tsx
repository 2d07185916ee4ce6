import { useCallback, useEffect, useState } from 'react';
import { ActionIcon, Alert, Badge, Button, Drawer, Group, Loader, Menu, Popover, SimpleGrid, Stack, Text, Textarea, ThemeIcon, Tooltip } from '@mantine/core';
import {
  IconArrowsMaximize,
  IconArrowsMinimize,
  IconBrandWindows,
  IconCheck,
  IconClipboard,
  IconDeviceDesktop,
  IconDots,
  IconDownload,
  IconFileUpload,
  IconFiles,
  IconInfoCircle,
  IconKeyboard,
  IconLayoutBoard,
  IconSend,
  IconX,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { browserClipboardApi, FUNCTION_KEYS, latencyColor, useLatency, type KeyboardMode, type ScaleMode, type SpecialKey, type ViewerAdapter } from './adapter';
import classes from '../VncViewerPage.module.css';
import { FilesPanel } from './FilesPanel';
import '../../../i18n/areas/viewer-toolbar';

// The bar above both browser viewers (VNC and RDP), one piece of code: the desktop's name, the
// connection's state and its measured round trip; then clipboard, special keys, scaling and
// keyboard, files, full screen and close, as far as the viewer's adapter offers them. On a phone
// the tools collapse into one menu (the panels open as a drawer).

/** Whether the page is full screen, kept in step with the browser (Esc leaves it too). */
function useFullscreen() {
  const [fullscreen, setFullscreen] = useState(Boolean(document.fullscreenElement));
  useEffect(() => {
    const onChange = () => setFullscreen(Boolean(document.fullscreenElement));
    document.addEventListener('fullscreenchange', onChange);
    return () => document.removeEventListener('fullscreenchange', onChange);
  }, []);
  const toggle = useCallback(() => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void document.documentElement.requestFullscreen?.().catch(() => undefined);
  }, []);
  return { fullscreen, toggle };
}

type Panel = 'clipboard' | 'keys' | 'files';

/** The special keys: Ctrl+Alt+Del, the Windows key, Ctrl+Alt+F1…F12. */
function KeyPad({ adapter, connected, onSent }: { adapter: ViewerAdapter; connected: boolean; onSent?: () => void }) {
  const { t } = useTranslation();
  const send = (key: SpecialKey) => {
    adapter.sendKey(key);
    onSent?.();
  };
  return (
    <Stack gap="xs">
      <SimpleGrid cols={2} spacing="xs">
        <Button size="xs" variant="default" leftSection={<IconKeyboard size={14} />} disabled={!connected} onClick={() => send('ctrl-alt-del')} data-testid="viewer-key-ctrl-alt-del">
          {t('viewer.ctrl_alt_del')}
        </Button>
        <Button size="xs" variant="default" leftSection={<IconBrandWindows size={14} />} disabled={!connected} onClick={() => send('win')} data-testid="viewer-key-win">
          {t('viewer_toolbar.win_key')}
        </Button>
      </SimpleGrid>
      <Text size="xs" fw={500} id="viewer-fkeys-label">
        {t('viewer_toolbar.ctrl_alt_fn')}
      </Text>
      <SimpleGrid cols={6} spacing={4} role="group" aria-labelledby="viewer-fkeys-label">
        {FUNCTION_KEYS.map((n) => (
          <Button
            key={n}
            size="compact-xs"
            variant="default"
            disabled={!connected}
            onClick={() => send(`ctrl-alt-f${n}`)}
            aria-label={t('viewer_toolbar.ctrl_alt_key', { key: `F${n}` })}
            data-testid={`viewer-key-ctrl-alt-f${n}`}
          >
            F{n}
          </Button>
        ))}
      </SimpleGrid>
    </Stack>
  );
}

/** Clipboard both ways: the desktop's last copied text to copy here, and a box whose text goes to the desktop. */
function ClipboardPanel({ adapter, connected }: { adapter: ViewerAdapter; connected: boolean }) {
  const { t } = useTranslation();
  const clip = adapter.clipboard;
  const [text, setText] = useState('');
  const [note, setNote] = useState<{ key: string; color: string } | null>(null);
  const [sending, setSending] = useState(false);
  const [fromDesktop, setFromDesktop] = useState(clip?.fromDesktop ?? '');
  useEffect(() => {
    if (clip?.fromDesktop != null) setFromDesktop(clip.fromDesktop);
  }, [clip?.fromDesktop]);
  if (!clip) {
    return (
      <Alert color="gray" variant="light" icon={<IconInfoCircle size={18} />} data-testid="viewer-clipboard-unavailable">
        {t(adapter.clipboardUnavailable ?? 'viewer_toolbar.clipboard_unavailable')}
      </Alert>
    );
  }
  const copyHere = async () => {
    try {
      const api = browserClipboardApi();
      if (!api) throw new Error('no clipboard');
      await api.writeText(fromDesktop);
      setNote({ key: 'viewer_toolbar.copied', color: 'teal' });
    } catch {
      setNote({ key: 'viewer_toolbar.copy_by_hand', color: 'orange' });
    }
  };
  const pasteHere = async () => {
    try {
      const api = browserClipboardApi();
      if (!api) throw new Error('no clipboard');
      setText(await api.readText());
      setNote(null);
    } catch {
      setNote({ key: 'viewer_toolbar.paste_by_hand', color: 'orange' });
    }
  };
  const send = async () => {
    setSending(true);
    try {
      await clip.toDesktop(text);
      setNote({ key: 'viewer_toolbar.sent', color: 'teal' });
    } catch {
      setNote({ key: 'viewer_toolbar.send_failed', color: 'red' });
    } finally {
      setSending(false);
    }
  };
  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        {t('viewer_toolbar.clipboard_hint')}
      </Text>
      <Stack gap={6}>
        <Textarea
          label={t('viewer_toolbar.from_desktop')}
          description={t('viewer_toolbar.from_desktop_hint')}
          value={fromDesktop}
          readOnly
          autosize
          minRows={3}
          maxRows={8}
          data-testid="viewer-clipboard-from"
        />
        <Group gap="xs">
          <Button size="xs" variant="default" leftSection={<IconClipboard size={14} />} disabled={!fromDesktop} onClick={() => void copyHere()} data-testid="viewer-clipboard-copy">
            {t('viewer_toolbar.copy_here')}
          </Button>
        </Group>
      </Stack>
      <Stack gap={6}>
        <Textarea
          label={t('viewer_toolbar.to_desktop')}
          description={t('viewer_toolbar.to_desktop_hint')}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          autosize
          minRows={3}
          maxRows={8}
          data-testid="viewer-clipboard-to"
        />
        <Group gap="xs">
          <Button size="xs" variant="default" leftSection={<IconClipboard size={14} />} onClick={() => void pasteHere()} data-testid="viewer-clipboard-paste">
            {t('viewer_toolbar.paste_here')}
          </Button>
          <Button size="xs" leftSection={<IconSend size={14} />} disabled={!connected || !text} loading={sending} onClick={() => void send()} data-testid="viewer-clipboard-send">
            {t('viewer_toolbar.send_to_desktop')}
          </Button>
        </Group>
      </Stack>
      {note && (
        <Text size="sm" c={note.color === 'teal' ? 'teal.8' : note.color === 'red' ? 'red.8' : 'orange.9'} role="status" data-testid="viewer-clipboard-note">
          {t(note.key)}
        </Text>
      )}
    </Stack>
  );
}

/** The scale modes (and the keyboard's, where the protocol has one) as menu items. */
function DisplayItems({ adapter, testPrefix }: { adapter: ViewerAdapter; testPrefix: string }) {
  const { t } = useTranslation();
  const item = (selected: boolean) => (selected ? <IconCheck size={14} /> : <span style={{ width: 14, display: 'inline-block' }} />);
  return (
    <>
      <Menu.Label>{t('viewer_toolbar.scaling')}</Menu.Label>
      {adapter.scale.modes.map((m: ScaleMode) => (
        <Menu.Item
          key={m}
          leftSection={item(adapter.scale.mode === m)}
          onClick={() => adapter.scale.set(m)}
          aria-current={adapter.scale.mode === m || undefined}
          data-checked={adapter.scale.mode === m}
          data-testid={`${testPrefix}scale-${m}`}
        >
          {t(`viewer_toolbar.scale.${m}`)}
        </Menu.Item>
      ))}
      {adapter.keyboard && (
        <>
          <Menu.Divider />
          <Menu.Label>{t('viewer_toolbar.keyboard')}</Menu.Label>
          {(['scancode', 'unicode'] as KeyboardMode[]).map((m) => (
            <Menu.Item
              key={m}
              leftSection={item(adapter.keyboard!.mode === m)}
              onClick={() => adapter.keyboard!.set(m)}
              aria-current={adapter.keyboard!.mode === m || undefined}
              data-checked={adapter.keyboard!.mode === m}
              data-testid={`${testPrefix}keyboard-${m}`}
            >
              {t(`viewer_toolbar.keyboard_mode.${m}`)}
            </Menu.Item>
          ))}
        </>
      )}
    </>
  );
}

/**
 * The bar above a browser viewer. `status`: the state's badge (its colour, text, and a spinner
 * while on its way); `reconnecting` marks the connection lost and being opened again.
 */
export function ViewerToolbar({
  name,
  status,
  connected,
  reconnecting = false,
  adapter,
  desktopId,
  onClose,
}: {
  name: string;
  /** The desktop (the ticket's): its files panel asks the portal with the person's session. */
  desktopId?: string;
  status: { color: string; label: string; busy: boolean };
  connected: boolean;
  reconnecting?: boolean;
  adapter: ViewerAdapter;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { fullscreen, toggle } = useFullscreen();
  const fullscreenLabel = t(fullscreen ? 'viewer.exit_fullscreen' : 'viewer.fullscreen');
  const latency = useLatency(connected);
  const [panel, setPanel] = useState<Panel | null>(null);
  const [keysOpen, setKeysOpen] = useState(false);
  const panelTitle = panel ? t(`viewer_toolbar.panel.${panel}`) : '';

  return (
    <header className={classes.bar} data-reconnecting={reconnecting || undefined}>
      <Group gap="sm" wrap="nowrap" style={{ minWidth: 0 }}>
        <ThemeIcon size={28} radius="md" variant="gradient" gradient={{ from: 'indigo', to: 'cyan', deg: 135 }}>
          <IconDeviceDesktop size={17} />
        </ThemeIcon>
        {name && (
          <Text fw={600} size="sm" className={classes.name} data-testid="viewer-name" title={name}>
            {name}
          </Text>
        )}
        <Badge
          color={status.color}
          variant="light"
          size="sm"
          leftSection={status.busy ? <Loader size={10} color="yellow" /> : null}
          data-testid="viewer-status"
          role="status"
          classNames={{ root: classes.status, label: classes.statusText, section: classes.statusSection }}
        >
          {status.label}
        </Badge>
        {connected && (
          <Tooltip label={t('viewer_toolbar.latency_hint')}>
            <Badge
              color={latencyColor(latency)}
              variant="light"
              size="sm"
              className={classes.latency}
              data-testid="viewer-latency"
              data-ms={latency ?? undefined}
              aria-label={latency === null ? t('viewer_toolbar.latency_unknown') : t('viewer_toolbar.latency_label', { ms: latency })}
            >
              {latency === null ? '– ms' : t('viewer_toolbar.latency', { ms: latency })}
            </Badge>
          </Tooltip>
        )}
      </Group>

      <Group gap={4} wrap="nowrap">
      {/* Wide screens: every tool on the bar. */}
      <Group gap={4} wrap="nowrap" visibleFrom="sm">
        <Tooltip label={t('viewer.ctrl_alt_del_hint')}>
          <Button
            size="compact-sm"
            variant="subtle"
            className={classes.tool}
            leftSection={<IconKeyboard size={16} />}
            disabled={!connected}
            onClick={() => adapter.sendKey('ctrl-alt-del')}
            data-testid="viewer-ctrl-alt-del"
            aria-label={t('viewer.ctrl_alt_del')}
          >
            <span className={classes.label}>{t('viewer.ctrl_alt_del')}</span>
          </Button>
        </Tooltip>
        <Popover opened={keysOpen} onChange={setKeysOpen} position="bottom-end" width={360} shadow="md" withinPortal trapFocus>
          <Popover.Target>
            <Tooltip label={t('viewer_toolbar.keys')} disabled={keysOpen}>
              <ActionIcon variant="subtle" size="lg" className={classes.tool} onClick={() => setKeysOpen((o) => !o)} aria-label={t('viewer_toolbar.keys')} aria-expanded={keysOpen} data-testid="viewer-keys">
                <IconKeyboard size={18} />
              </ActionIcon>
            </Tooltip>
          </Popover.Target>
          <Popover.Dropdown data-testid="viewer-keys-panel" aria-label={t('viewer_toolbar.keys')} role="dialog">
            <KeyPad adapter={adapter} connected={connected} onSent={() => setKeysOpen(false)} />
          </Popover.Dropdown>
        </Popover>
        <Tooltip label={t('viewer_toolbar.panel.clipboard')}>
          <ActionIcon variant="subtle" size="lg" className={classes.tool} onClick={() => setPanel('clipboard')} aria-label={t('viewer_toolbar.panel.clipboard')} data-testid="viewer-clipboard">
            <IconClipboard size={18} />
          </ActionIcon>
        </Tooltip>
        <Menu position="bottom-end" width={260} shadow="md">
          <Menu.Target>
            <Tooltip label={t('viewer_toolbar.display')}>
              <ActionIcon variant="subtle" size="lg" className={classes.tool} aria-label={t('viewer_toolbar.display')} data-testid="viewer-display">
                <IconLayoutBoard size={18} />
              </ActionIcon>
            </Tooltip>
          </Menu.Target>
          <Menu.Dropdown data-testid="viewer-display-menu">
            <DisplayItems adapter={adapter} testPrefix="viewer-" />
          </Menu.Dropdown>
        </Menu>
        <Tooltip label={t('viewer_toolbar.panel.files')}>
          <ActionIcon variant="subtle" size="lg" className={classes.tool} onClick={() => setPanel('files')} aria-label={t('viewer_toolbar.panel.files')} data-testid="viewer-files">
            <IconFiles size={18} />
          </ActionIcon>
        </Tooltip>
        <Tooltip label={fullscreenLabel}>
          <ActionIcon variant="subtle" size="lg" className={classes.tool} onClick={toggle} aria-label={fullscreenLabel} data-testid="viewer-fullscreen">
            {fullscreen ? <IconArrowsMinimize size={18} /> : <IconArrowsMaximize size={18} />}
          </ActionIcon>
        </Tooltip>
      </Group>

      {/* Phones: one menu. */}
      <Group gap={4} wrap="nowrap" hiddenFrom="sm">
        <Menu position="bottom-end" width={240} shadow="md">
          <Menu.Target>
            <ActionIcon variant="subtle" size="lg" className={classes.tool} aria-label={t('viewer_toolbar.menu')} data-testid="viewer-menu">
              <IconDots size={18} />
            </ActionIcon>
          </Menu.Target>
          <Menu.Dropdown data-testid="viewer-menu-dropdown">
            <Menu.Item leftSection={<IconClipboard size={14} />} onClick={() => setPanel('clipboard')} data-testid="viewer-menu-clipboard">
              {t('viewer_toolbar.panel.clipboard')}
            </Menu.Item>
            <Menu.Item leftSection={<IconKeyboard size={14} />} onClick={() => setPanel('keys')} data-testid="viewer-menu-keys">
              {t('viewer_toolbar.keys')}
            </Menu.Item>
            <Menu.Item leftSection={<IconFiles size={14} />} onClick={() => setPanel('files')} data-testid="viewer-menu-files">
              {t('viewer_toolbar.panel.files')}
            </Menu.Item>
            <Menu.Item leftSection={fullscreen ? <IconArrowsMinimize size={14} /> : <IconArrowsMaximize size={14} />} onClick={toggle} data-testid="viewer-menu-fullscreen">
              {fullscreenLabel}
            </Menu.Item>
            <Menu.Divider />
            <DisplayItems adapter={adapter} testPrefix="viewer-menu-" />
          </Menu.Dropdown>
        </Menu>
      </Group>
      <Tooltip label={t('viewer.close')}>
        <ActionIcon variant="subtle" size="lg" className={classes.tool} onClick={onClose} aria-label={t('viewer.close')} data-testid="viewer-close">
          <IconX size={18} />
        </ActionIcon>
      </Tooltip>
      </Group>

      <Drawer
        opened={panel !== null}
        onClose={() => setPanel(null)}
        position="right"
        size="md"
        title={panelTitle}
        closeButtonProps={{ 'aria-label': t('viewer_toolbar.close_panel') }}
      >
        <div data-testid={panel ? `viewer-panel-${panel}` : undefined}>
        {panel === 'clipboard' && <ClipboardPanel adapter={adapter} connected={connected} />}
        {panel === 'keys' && <KeyPad adapter={adapter} connected={connected} onSent={() => setPanel(null)} />}
        {panel === 'files' && <FilesPanel desktopId={desktopId} />}
        </div>
      </Drawer>
    </header>
  );
}

import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ActionIcon, Badge, Button, Group, Loader, Paper, Stack, Text, ThemeIcon, Title, Tooltip } from '@mantine/core';
import {
  IconAlertTriangle,
  IconArrowsMaximize,
  IconArrowsMinimize,
  IconClockExclamation,
  IconDeviceDesktop,
  IconKeyboard,
  IconPlugConnectedX,
  IconRefresh,
  IconServerOff,
  IconX,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TRdpViewerTicket } from '@vdi/contracts';
import { errorMessage } from '../../lib/errors';
import { session } from '../../lib/session';
import { browserViewerCookie, forgetBrowserViewerCookie, rdpTicketFromPage } from './ticket';
import { fetchRdpTicket } from './open';
import { useRdp } from './use-rdp';
import type { RdpState } from './rdp-state';
import classes from './VncViewerPage.module.css';
import { builtInText } from '../../lib/built-in-text';

const DESKTOP_PARAM = 'desktop';

/** The state's key in the texts and its badge colour. */
function stateKey(s: RdpState): string {
  if (s.kind === 'connected') return s.unstable ? 'unstable' : 'connected';
  return s.kind.replace(/-/g, '_');
}
const COLOR: Record<string, string> = {
  connecting: 'yellow',
  connected: 'teal',
  unstable: 'orange',
  retrying: 'yellow',
  disconnected: 'gray',
  error: 'red',
  cookie_missing: 'orange',
  cookie_expired: 'orange',
  rdp_not_running: 'red',
};

/**
 * Reads the ticket once (fragment, else the `browser_viewer` cookie of the original system's
 * clients), then leaves only `?desktop=<id>` in the address bar: a reloaded or reopened tab asks
 * the portal for a new ticket for that desktop (the ticket itself is single-use and holds the
 * guest's password).
 */
function useRdpTicket() {
  const [ticket, setTicket] = useState(() => rdpTicketFromPage(window.location.hash, document.cookie));
  const [desktopId] = useState(() => ticket?.desktopId ?? new URLSearchParams(window.location.search).get(DESKTOP_PARAM));
  const [loadError, setLoadError] = useState<unknown>(null);
  useEffect(() => {
    if (browserViewerCookie(document.cookie) !== null) forgetBrowserViewerCookie();
    if (desktopId) history.replaceState(history.state, '', `${window.location.pathname}?${DESKTOP_PARAM}=${encodeURIComponent(desktopId)}`);
    else if (window.location.hash) history.replaceState(history.state, '', window.location.pathname);
    // Reopened: no ticket in the page, but the desktop is known and the person is signed in.
    if (!ticket && desktopId && session.token()) fetchRdpTicket(desktopId).then(setTicket, setLoadError);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once, when the page opens: it reads and tidies the address bar and asks for a ticket a single time
  }, []);
  return { ticket, setTicket, desktopId, loadError, reopening: !ticket && Boolean(desktopId && session.token()) && !loadError };
}

export default function RdpViewerPage() {
  const { t, i18n } = useTranslation();
  const { ticket, setTicket, desktopId, loadError, reopening } = useRdpTicket();
  const screenRef = useRef<HTMLDivElement>(null);
  const signedIn = Boolean(session.token());
  const renew = useCallback(() => fetchRdpTicket(desktopId!), [desktopId]);
  const { state, ui } = useRdp(screenRef, ticket, desktopId && signedIn ? renew : null);
  const [fullscreen, setFullscreen] = useState(Boolean(document.fullscreenElement));
  const [reconnecting, setReconnecting] = useState(false);
  const [reconnectError, setReconnectError] = useState<string | null>(null);
  const [closeTried, setCloseTried] = useState(false);

  const shown: RdpState = reopening ? { kind: 'connecting' } : state;
  const key = stateKey(shown);
  const name = builtInText(t, ticket?.name ?? '');

  useEffect(() => {
    document.title = name ? `${name} · ${t('app.title')}` : `${t('routes.rdp')} · ${t('app.title')}`;
  }, [name, t, i18n.language]);

  useEffect(() => {
    const onChange = () => setFullscreen(Boolean(document.fullscreenElement));
    document.addEventListener('fullscreenchange', onChange);
    return () => document.removeEventListener('fullscreenchange', onChange);
  }, []);

  const toggleFullscreen = useCallback(() => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void document.documentElement.requestFullscreen?.().catch(() => undefined);
  }, []);

  const close = useCallback(() => {
    try {
      ui.current?.shutdown();
    } catch {
      /* not connected */
    }
    window.close();
    setTimeout(() => setCloseTried(true), 300);
  }, [ui]);

  const canReconnect = Boolean(desktopId && signedIn);
  const reconnect = useCallback(async () => {
    if (!desktopId) return;
    setReconnecting(true);
    setReconnectError(null);
    try {
      setTicket(await fetchRdpTicket(desktopId));
    } catch (err) {
      setReconnectError(errorMessage(i18n.t.bind(i18n), err, (k) => i18n.exists(k)));
    } finally {
      setReconnecting(false);
    }
  }, [desktopId, setTicket, i18n]);

  const connected = shown.kind === 'connected';
  const busy = shown.kind === 'connecting' || shown.kind === 'retrying';
  const ended = !connected && !busy;
  const body =
    shown.kind === 'error'
      ? t(`viewer.rdp.body.error_${shown.detail}`)
      : loadError
        ? errorMessage(i18n.t.bind(i18n), loadError, (k) => i18n.exists(k))
        : t(`viewer.rdp.body.${key}`);
  const EndIcon = shown.kind === 'cookie-expired' ? IconClockExclamation : shown.kind === 'rdp-not-running' ? IconServerOff : shown.kind === 'cookie-missing' ? IconAlertTriangle : IconPlugConnectedX;

  return (
    <div className={classes.page} data-testid="rdp-viewer" data-state={key}>
      <header className={classes.bar}>
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
            color={COLOR[key] ?? 'gray'}
            variant="light"
            size="sm"
            leftSection={busy ? <Loader size={10} color="yellow" /> : null}
            data-testid="viewer-status"
            classNames={{ root: classes.status, label: classes.statusText, section: classes.statusSection }}
          >
            {shown.kind === 'retrying' ? t('viewer.rdp.state.retrying', { n: shown.attempt, max: shown.max }) : t(`viewer.rdp.state.${key}`)}
          </Badge>
        </Group>
        <Group gap={6} wrap="nowrap">
          <Tooltip label={t('viewer.ctrl_alt_del_hint')}>
            <Button
              size="compact-sm"
              variant="subtle"
              className={classes.tool}
              leftSection={<IconKeyboard size={16} />}
              disabled={!connected}
              onClick={() => ui.current?.ctrlAltDel()}
              data-testid="viewer-ctrl-alt-del"
              aria-label={t('viewer.ctrl_alt_del')}
            >
              <span className={classes.label}>{t('viewer.ctrl_alt_del')}</span>
            </Button>
          </Tooltip>
          <Tooltip label={t(fullscreen ? 'viewer.exit_fullscreen' : 'viewer.fullscreen')}>
            <ActionIcon variant="subtle" size="lg" className={classes.tool} onClick={toggleFullscreen} aria-label={t(fullscreen ? 'viewer.exit_fullscreen' : 'viewer.fullscreen')} data-testid="viewer-fullscreen">
              {fullscreen ? <IconArrowsMinimize size={18} /> : <IconArrowsMaximize size={18} />}
            </ActionIcon>
          </Tooltip>
          <Tooltip label={t('viewer.close')}>
            <ActionIcon variant="subtle" size="lg" className={classes.tool} onClick={close} aria-label={t('viewer.close')} data-testid="viewer-close">
              <IconX size={18} />
            </ActionIcon>
          </Tooltip>
        </Group>
      </header>
      <main className={classes.screen}>
        <div ref={screenRef} className={classes.display} data-testid="viewer-screen" />
        {busy && (
          <div className={classes.overlay} style={{ background: 'transparent', backdropFilter: 'none', pointerEvents: 'none' }}>
            <Stack align="center" gap="sm" data-testid="rdp-busy">
              <Loader color="indigo" />
              <Text size="sm" c="gray.4">
                {shown.kind === 'retrying'
                  ? t('viewer.rdp.body.retrying', { n: shown.attempt, max: shown.max })
                  : name
                    ? t('viewer.connecting_to', { name })
                    : t('viewer.rdp.state.connecting')}
              </Text>
            </Stack>
          </div>
        )}
        {ended && (
          <div className={classes.overlay}>
            <Paper withBorder radius="lg" p="xl" maw={460} w="100%" className={classes.card} data-testid="rdp-ended">
              <Stack align="center" gap="md">
                <ThemeIcon size={56} radius="xl" variant="light" color={COLOR[key] ?? 'gray'}>
                  <EndIcon size={30} />
                </ThemeIcon>
                <Title order={1} size="h4" ta="center">
                  {t(`viewer.rdp.title.${key}`)}
                </Title>
                <Text size="sm" c="dimmed" ta="center" data-testid="rdp-ended-body">
                  {body}
                </Text>
                {reconnectError && (
                  <Text size="sm" c="red" ta="center" data-testid="viewer-reconnect-error">
                    {reconnectError}
                  </Text>
                )}
                <Group justify="center">
                  {canReconnect && (
                    <Button variant="default" leftSection={<IconRefresh size={16} />} loading={reconnecting} onClick={() => void reconnect()} data-testid="viewer-reconnect">
                      {t('viewer.reconnect')}
                    </Button>
                  )}
                  {!canReconnect && shown.kind === 'cookie-missing' ? (
                    <Button component={Link} to="/desktops" data-testid="viewer-go-desktops">
                      {t('viewer.go_desktops')}
                    </Button>
                  ) : (
                    <Button leftSection={<IconX size={16} />} onClick={close} data-testid="viewer-close-tab">
                      {t('viewer.close_tab')}
                    </Button>
                  )}
                </Group>
                {closeTried && (
                  <Text size="xs" c="dimmed" ta="center">
                    {t('viewer.close_manually')}
                  </Text>
                )}
              </Stack>
            </Paper>
          </div>
        )}
      </main>
    </div>
  );
}

import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ActionIcon, Badge, Button, Group, Loader, Paper, Stack, Text, ThemeIcon, Title, Tooltip } from '@mantine/core';
import {
  IconAlertTriangle,
  IconArrowsMaximize,
  IconArrowsMinimize,
  IconDeviceDesktop,
  IconKeyboard,
  IconPlugConnectedX,
  IconRefresh,
  IconX,
} from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TBrowserViewerTicket } from '@vdi/contracts';
import { errorMessage } from '../../lib/errors';
import { session } from '../../lib/session';
import { browserViewerCookie, forgetBrowserViewerCookie, ticketFromPage } from '../../entities/viewer/ticket';
import { useVnc } from '../../entities/viewer/use-vnc';
import { useBlankScreen } from './blank';
import { fetchVncTicket } from '../../entities/viewer/open';
import classes from './VncViewerPage.module.css';
import { builtInText } from '../../lib/built-in-text';

type Status = 'connecting' | 'connected' | 'disconnected';
type Ended = { reason: 'closed' | 'failed' | 'denied' };

const STATUS_COLOR: Record<Status, string> = { connecting: 'yellow', connected: 'teal', disconnected: 'red' };

/**
 * Reads the ticket once: from the fragment (this portal's own pages), else from the
 * `browser_viewer` cookie that clients written for the original system set before opening the
 * viewer. Then takes it out of the address bar and the cookie jar (it is single-use and holds a password).
 */
function useTicket(): [TBrowserViewerTicket | null, (t: TBrowserViewerTicket) => void] {
  const [ticket, setTicket] = useState(() => ticketFromPage(window.location.hash, document.cookie));
  useEffect(() => {
    if (window.location.hash) history.replaceState(history.state, '', window.location.pathname + window.location.search);
    if (browserViewerCookie(document.cookie) !== null) forgetBrowserViewerCookie();
  }, []);
  return [ticket, setTicket];
}

export default function VncViewerPage() {
  const { t, i18n } = useTranslation();
  const [ticket, setTicket] = useTicket();
  const screenRef = useRef<HTMLDivElement>(null);
  const { status: vncStatus, ended: endReason, reason: closeReason, rfb: rfbRef } = useVnc(screenRef, ticket);
  const status: Status = vncStatus === 'idle' ? 'connecting' : vncStatus;
  const booting = useBlankScreen(screenRef, status === 'connected');
  const ended: Ended | null = endReason ? { reason: endReason } : null;
  const [fullscreen, setFullscreen] = useState(Boolean(document.fullscreenElement));
  const [reconnecting, setReconnecting] = useState(false);
  const [reconnectError, setReconnectError] = useState<string | null>(null);
  const [closeTried, setCloseTried] = useState(false);

  useEffect(() => {
    document.title = ticket ? `${builtInText(t, ticket.name)} · ${t('app.title')}` : `${t('routes.viewer')} · ${t('app.title')}`;
  }, [ticket, t, i18n.language]);

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
    rfbRef.current?.disconnect();
    window.close();
    // A tab the portal did not open cannot be closed by the page: say so.
    setTimeout(() => setCloseTried(true), 300);
  }, []);

  /** A signed-in person can get a fresh ticket for the same desktop. */
  const canReconnect = Boolean(ticket && session.token());
  const reconnect = useCallback(async () => {
    if (!ticket) return;
    setReconnecting(true);
    setReconnectError(null);
    try {
      setTicket(await fetchVncTicket(ticket.desktopId));
    } catch (err) {
      setReconnectError(errorMessage(i18n.t.bind(i18n), err, (k) => i18n.exists(k)));
    } finally {
      setReconnecting(false);
    }
  }, [ticket, setTicket, i18n]);

  if (!ticket) {
    return (
      <div className={classes.page}>
        <div className={classes.overlay}>
          <Paper withBorder radius="lg" p="xl" maw={440} w="100%" className={classes.card} data-testid="viewer-no-ticket">
            <Stack align="center" gap="md">
              <ThemeIcon size={56} radius="xl" variant="light" color="orange">
                <IconAlertTriangle size={30} />
              </ThemeIcon>
              <Title order={1} size="h4" ta="center">
                {t('viewer.no_ticket_title')}
              </Title>
              <Text size="sm" c="dimmed" ta="center">
                {t('viewer.no_ticket_body')}
              </Text>
              <Button component={Link} to="/desktops" data-testid="viewer-go-desktops">
                {t('viewer.go_desktops')}
              </Button>
            </Stack>
          </Paper>
        </div>
      </div>
    );
  }

  return (
    <div className={classes.page} data-testid="vnc-viewer" data-status={status}>
      <header className={classes.bar}>
        <Group gap="sm" wrap="nowrap" style={{ minWidth: 0 }}>
          <ThemeIcon size={28} radius="md" variant="gradient" gradient={{ from: 'indigo', to: 'cyan', deg: 135 }}>
            <IconDeviceDesktop size={17} />
          </ThemeIcon>
          <Text fw={600} size="sm" className={classes.name} data-testid="viewer-name" title={builtInText(t, ticket.name)}>
            {builtInText(t, ticket.name)}
          </Text>
          <Badge
            color={STATUS_COLOR[status]}
            variant="light"
            size="sm"
            leftSection={status === 'connecting' ? <Loader size={10} color="yellow" /> : null}
            data-testid="viewer-status"
            classNames={{ root: classes.status, label: classes.statusText, section: classes.statusSection }}
          >
            {t(`viewer.status.${status}`)}
          </Badge>
        </Group>
        <Group gap={6} wrap="nowrap">
          <Tooltip label={t('viewer.ctrl_alt_del_hint')}>
            <Button
              size="compact-sm"
              variant="subtle"
              className={classes.tool}
              leftSection={<IconKeyboard size={16} />}
              disabled={status !== 'connected'}
              onClick={() => rfbRef.current?.sendCtrlAltDel()}
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
        {status === 'connecting' && (
          <div className={classes.overlay} style={{ background: 'transparent', backdropFilter: 'none', pointerEvents: 'none' }}>
            <Stack align="center" gap="sm">
              <Loader color="indigo" />
              <Text size="sm" c="gray.4">
                {t('viewer.connecting_to', { name: builtInText(t, ticket.name) })}
              </Text>
            </Stack>
          </div>
        )}
        {status === 'connected' && booting && (
          // Connected to a guest that has not drawn anything yet: it is booting, not broken.
          <div className={classes.overlay} style={{ background: 'transparent', backdropFilter: 'none', pointerEvents: 'none' }} role="status" data-testid="viewer-booting">
            <Stack align="center" gap="sm" maw={420} px="md">
              <Loader color="indigo" type="dots" />
              <Text size="sm" c="gray.3" ta="center">
                {t('viewer.booting', { name: builtInText(t, ticket.name) })}
              </Text>
            </Stack>
          </div>
        )}
        {status === 'disconnected' && (
          <div className={classes.overlay}>
            <Paper withBorder radius="lg" p="xl" maw={440} w="100%" className={classes.card} data-testid="viewer-disconnected">
              <Stack align="center" gap="md">
                <ThemeIcon size={56} radius="xl" variant="light" color={ended?.reason === 'closed' ? 'gray' : 'red'}>
                  <IconPlugConnectedX size={30} />
                </ThemeIcon>
                <Title order={1} size="h4" ta="center">
                  {t('viewer.disconnected_title')}
                </Title>
                <Text size="sm" c="dimmed" ta="center" data-testid="viewer-ended" data-reason={closeReason ?? ended?.reason ?? 'closed'}>
                  {closeReason && i18n.exists(`errors.${closeReason}`) ? t(`errors.${closeReason}`) : t(`viewer.ended.${ended?.reason ?? 'closed'}`)}
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
                  <Button leftSection={<IconX size={16} />} onClick={close} data-testid="viewer-close-tab">
                    {t('viewer.close_tab')}
                  </Button>
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

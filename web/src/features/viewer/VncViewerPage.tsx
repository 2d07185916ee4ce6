import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Button, Loader, Paper, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconAlertTriangle, IconPlugConnectedX, IconX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import type { TBrowserViewerTicket } from '@vdi/contracts';
import { session } from '../../lib/session';
import { browserViewerCookie, forgetBrowserViewerCookie, ticketFromPage } from '../../entities/viewer/ticket';
import { useVnc } from '../../entities/viewer/use-vnc';
import { useBlankScreen } from './blank';
import { useAutoReconnect, useCloseTab, useReconnect, ViewerEnded } from './ViewerFrame';
import { ViewerToolbar } from './toolbar/ViewerToolbar';
import { useVncAdapter } from './vnc-adapter';
import { isDropped } from '../../entities/viewer/reconnect';
import { fetchVncTicket } from '../../entities/viewer/open';
import classes from './VncViewerPage.module.css';
import { builtInText } from '../../lib/built-in-text';

type Status = 'connecting' | 'connected' | 'reconnecting' | 'disconnected';
type Ended = { reason: 'closed' | 'failed' | 'denied' };

const STATUS_COLOR: Record<Status, string> = { connecting: 'yellow', connected: 'teal', reconnecting: 'yellow', disconnected: 'red' };

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
  const { status: vncStatus, ended: endReason, reason: closeReason, code: closeCode, clipboard, rfb: rfbRef } = useVnc(screenRef, ticket);
  const adapter = useVncAdapter(rfbRef, vncStatus === 'connected', clipboard, ticket?.clipboard !== false);
  const booting = useBlankScreen(screenRef, vncStatus === 'connected');
  const ended: Ended | null = endReason ? { reason: endReason } : null;

  useEffect(() => {
    document.title = ticket ? `${builtInText(t, ticket.name)} · ${t('app.title')}` : `${t('routes.viewer')} · ${t('app.title')}`;
  }, [ticket, t, i18n.language]);

  /** Set when the person closes the viewer: that end is not a drop to reconnect through. */
  const closedByPerson = useRef(false);
  const disconnect = useCallback(() => {
    closedByPerson.current = true;
    rfbRef.current?.disconnect();
  }, [rfbRef]);
  const { close, tried: closeTried } = useCloseTab(disconnect);

  /** A signed-in person can get a fresh ticket for the same desktop. */
  const canReconnect = Boolean(ticket && session.token());
  const desktopId = ticket?.desktopId;
  const renew = useCallback(() => fetchVncTicket(desktopId!), [desktopId]);
  const reconnection = useReconnect(desktopId ? renew : null, setTicket);
  // Dropped under it (its server process went away) rather than ended by the desktop or the person:
  // a fresh ticket (refused once the desktop no longer runs) and a new connection, through another process.
  const lost = vncStatus !== 'disconnected' || endReason === 'denied' || closeCode === null || closeCode === 1000 || closedByPerson.current ? null : isDropped(closeCode) ? 'dropped' : 'failed';
  const auto = useAutoReconnect(lost, vncStatus === 'connected', canReconnect ? renew : null, setTicket);
  const status: Status = vncStatus === 'idle' ? 'connecting' : vncStatus !== 'connected' && auto.active ? 'reconnecting' : vncStatus;
  const ending = { ...reconnection, reconnectError: reconnection.reconnectError ?? auto.error };

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
      <ViewerToolbar
        name={builtInText(t, ticket.name)}
        status={{ color: STATUS_COLOR[status], busy: status === 'connecting' || status === 'reconnecting', label: t(`viewer.status.${status}`) }}
        connected={status === 'connected'}
        reconnecting={status === 'reconnecting'}
        adapter={adapter}
        desktopId={desktopId ?? undefined}
        onClose={close}
      />
      <main className={classes.screen}>
        <div ref={screenRef} className={classes.display} data-testid="viewer-screen" />
        {(status === 'connecting' || status === 'reconnecting') && (
          <div className={classes.overlay} style={status === 'reconnecting' ? { pointerEvents: 'none' } : { background: 'transparent', backdropFilter: 'none', pointerEvents: 'none' }} role="status">
            <Stack align="center" gap="sm">
              <Loader color="indigo" />
              <Text size="sm" c="gray.4" data-testid={status === 'reconnecting' ? 'viewer-reconnecting' : undefined}>
                {t(status === 'reconnecting' ? 'viewer.reconnecting_to' : 'viewer.connecting_to', { name: builtInText(t, ticket.name) })}
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
          <ViewerEnded
            testId="viewer-disconnected"
            width={440}
            icon={<IconPlugConnectedX size={30} />}
            color={ended?.reason === 'closed' ? 'gray' : 'red'}
            title={t('viewer.disconnected_title')}
            body={
              <Text size="sm" c="dimmed" ta="center" data-testid="viewer-ended" data-reason={closeReason ?? ended?.reason ?? 'closed'}>
                {closeReason && i18n.exists(`errors.${closeReason}`) ? t(`errors.${closeReason}`) : t(`viewer.ended.${ended?.reason ?? 'closed'}`)}
              </Text>
            }
            canReconnect={canReconnect}
            reconnect={ending}
            closeTried={closeTried}
            action={
              <Button leftSection={<IconX size={16} />} onClick={close} data-testid="viewer-close-tab">
                {t('viewer.close_tab')}
              </Button>
            }
          />
        )}
      </main>
    </div>
  );
}

import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Button, Loader, Stack, Text } from '@mantine/core';
import { IconAlertTriangle, IconClockExclamation, IconPlugConnectedX, IconServerOff, IconX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../lib/errors';
import { session } from '../../lib/session';
import { browserViewerCookie, forgetBrowserViewerCookie, rdpTicketFromPage } from '../../entities/viewer/ticket';
import { fetchRdpTicket } from '../../entities/viewer/open';
import { useRdp } from './use-rdp';
import { useCloseTab, useReconnect, ViewerEnded } from './ViewerFrame';
import { ViewerToolbar } from './toolbar/ViewerToolbar';
import { useRdpAdapter } from './rdp-adapter';
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
    // The address keeps the desktop (a reload reopens it) and whether this tab is the portal's own (VIEWER_HOME_PARAM).
    const search = new URLSearchParams(window.location.search);
    if (desktopId) search.set(DESKTOP_PARAM, desktopId);
    const query = search.toString();
    if (desktopId || window.location.hash) history.replaceState(history.state, '', `${window.location.pathname}${query ? `?${query}` : ''}`);
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
  const { state, ui, element, clipboard } = useRdp(screenRef, ticket, desktopId && signedIn ? renew : null);

  const shown: RdpState = reopening ? { kind: 'connecting' } : state;
  const key = stateKey(shown);
  const name = builtInText(t, ticket?.name ?? '');

  useEffect(() => {
    document.title = name ? `${name} · ${t('app.title')}` : `${t('routes.rdp')} · ${t('app.title')}`;
  }, [name, t, i18n.language]);

  const shutdown = useCallback(() => {
    try {
      ui.current?.shutdown();
    } catch {
      /* not connected */
    }
  }, [ui]);
  const { close, tried: closeTried } = useCloseTab(shutdown);

  const canReconnect = Boolean(desktopId && signedIn);
  const reconnection = useReconnect(desktopId ? renew : null, setTicket);

  const connected = shown.kind === 'connected';
  const adapter = useRdpAdapter(ui, element, screenRef, connected, clipboard);
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
      <ViewerToolbar
        name={name}
        status={{ color: COLOR[key] ?? 'gray', busy, label: shown.kind === 'retrying' ? t('viewer.rdp.state.retrying', { n: shown.attempt, max: shown.max }) : t(`viewer.rdp.state.${key}`) }}
        connected={connected}
        reconnecting={shown.kind === 'retrying'}
        adapter={adapter}
        desktopId={desktopId ?? undefined}
        onClose={close}
      />
      <main className={classes.screen}>
        <div ref={screenRef} className={classes.display} data-testid="viewer-screen" />
        {busy && (
          <div className={classes.overlay} style={shown.kind === 'retrying' ? { pointerEvents: 'none' } : { background: 'transparent', backdropFilter: 'none', pointerEvents: 'none' }} role="status">
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
          <ViewerEnded
            testId="rdp-ended"
            width={460}
            icon={<EndIcon size={30} />}
            color={COLOR[key] ?? 'gray'}
            title={t(`viewer.rdp.title.${key}`)}
            body={
              <Text size="sm" c="dimmed" ta="center" data-testid="rdp-ended-body">
                {body}
              </Text>
            }
            canReconnect={canReconnect}
            reconnect={reconnection}
            closeTried={closeTried}
            action={
              !canReconnect && shown.kind === 'cookie-missing' ? (
                <Button component={Link} to="/desktops" data-testid="viewer-go-desktops">
                  {t('viewer.go_desktops')}
                </Button>
              ) : (
                <Button leftSection={<IconX size={16} />} onClick={close} data-testid="viewer-close-tab">
                  {t('viewer.close_tab')}
                </Button>
              )
            }
          />
        )}
      </main>
    </div>
  );
}

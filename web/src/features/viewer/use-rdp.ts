import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import type { UserInteraction } from '@devolutions/iron-remote-desktop';
import type { TRdpViewerTicket } from '@vdi/contracts';
import type { IronElement, IronReadyEvent } from './iron';
import { desktopSizeFor, failureOf, type RdpState } from './rdp-state';
import { rdpSocketUrl } from '../../entities/viewer/ticket';
import { RECONNECT_BOUND_MS, renewWithin } from '../../entities/viewer/reconnect';
import { clipboardSettled, installRdpClipboard, onDesktopClipboard } from './rdp-clipboard';

/** Attempts after a lost or failed connection, each with a new ticket. */
export const RDP_MAX_RETRIES = 3;
const RETRY_DELAY_MS = 3000;
const UNSTABLE_MS = 5000;

/** The IronRDP web client (6 MB with its WebAssembly): loaded when the page first connects, once. */
let iron: Promise<typeof import('@devolutions/iron-remote-desktop-rdp')> | null = null;
function loadIron() {
  iron ??= (async () => {
    installRdpClipboard(); // before the component reads the page's clipboard
    await import('@devolutions/iron-remote-desktop'); // registers <iron-remote-desktop>
    const rdp = await import('@devolutions/iron-remote-desktop-rdp');
    await rdp.init('WARN');
    return rdp;
  })();
  iron.catch(() => {
    iron = null;
  });
  return iron;
}

/**
 * One browser RDP session in `screen`, for as long as a ticket is given: connects through the
 * portal's RDCleanPath websocket, fits the desktop to the window, and on a lost connection tries
 * again with fresh tickets from `renew` (retrying n of max). Answers the state and the controls.
 */
export function useRdp(screen: RefObject<HTMLDivElement | null>, ticket: TRdpViewerTicket | null, renew: (() => Promise<TRdpViewerTicket>) | null) {
  const [state, setState] = useState<RdpState>(ticket ? { kind: 'connecting' } : { kind: 'cookie-missing' });
  const uiRef = useRef<UserInteraction | null>(null);
  /** The <iron-remote-desktop> element of the connection (keys are sent to its canvas). */
  const elementRef = useRef<IronElement | null>(null);
  /** The last text the desktop put on its clipboard. */
  const [clipboard, setClipboard] = useState<string | null>(null);
  useEffect(() => onDesktopClipboard(setClipboard) as () => void, []);
  const [generation, setGeneration] = useState(0);
  const renewRef = useRef(renew);
  renewRef.current = renew;

  useEffect(() => {
    const host = screen.current;
    if (!ticket || !host) {
      setState({ kind: 'cookie-missing' });
      return;
    }
    if (ticket.exp * 1000 < Date.now() && !renewRef.current) {
      setState({ kind: 'cookie-expired' });
      return;
    }
    let cancelled = false;
    const gone = new AbortController();
    let element: IronElement | null = null;
    let unstableTimer: ReturnType<typeof setTimeout> | undefined;

    const teardown = () => {
      try {
        uiRef.current?.shutdown();
      } catch {
        /* not connected */
      }
      uiRef.current = null;
      element?.remove();
      element = null;
      elementRef.current = null;
    };

    const markUnstable = () => {
      setState((s) => (s.kind === 'connected' ? { kind: 'connected', unstable: true } : s));
      clearTimeout(unstableTimer);
      unstableTimer = setTimeout(() => setState((s) => (s.kind === 'connected' && navigator.onLine ? { kind: 'connected', unstable: false } : s)), UNSTABLE_MS);
    };

    /** One connection: answers how it ended. */
    const connectOnce = async (t: TRdpViewerTicket): Promise<{ ended: 'closed' } | { ended: 'failed'; err: unknown; connected: boolean }> => {
      const rdp = await loadIron();
      if (cancelled) return { ended: 'closed' };
      element = document.createElement('iron-remote-desktop') as IronElement;
      element.module = rdp.Backend;
      element.setAttribute('scale', 'fit');
      element.setAttribute('flexcenter', 'true');
      element.style.width = '100%';
      element.style.height = '100%';
      const ui = await new Promise<UserInteraction>((resolve) => {
        element!.addEventListener('ready', (e) => resolve((e as IronReadyEvent).detail.irgUserInteraction), { once: true });
        host.appendChild(element!);
      });
      await clipboardSettled();
      if (cancelled) return { ended: 'closed' };
      uiRef.current = ui;
      elementRef.current = element;
      ui.onWarningCallback(() => markUnstable());
      try {
        // Registered with the session at connect: the clipboard (the page's stand-in, rdp-clipboard.ts) both ways.
        ui.setEnableClipboard(true);
        ui.setEnableAutoClipboard(true);
      } catch {
        /* the browser keeps the clipboard to itself: the session still works */
      }
      const size = desktopSizeFor(host.clientWidth, host.clientHeight);
      const config = ui
        .configBuilder()
        .withUsername(t.username)
        .withPassword(t.password)
        .withDestination(t.destination)
        .withProxyAddress(rdpSocketUrl(window.location))
        .withAuthToken(t.token)
        .withDesktopSize(size)
        .withExtension(rdp.displayControl(true))
        .build();
      let connected = false;
      try {
        const session = await ui.connect(config);
        connected = true;
        if (cancelled) return { ended: 'closed' };
        ui.setVisibility(true);
        setState({ kind: 'connected', unstable: !navigator.onLine });
        await session.run();
        return { ended: 'closed' };
      } catch (err) {
        return { ended: 'failed', err, connected };
      }
    };

    const timer = setTimeout(() => {
      void (async () => {
        let current = ticket;
        for (let attempt = 0; ; attempt++) {
          if (attempt > 0) setState({ kind: 'retrying', attempt, max: RDP_MAX_RETRIES });
          else setState({ kind: 'connecting' });
          const outcome = await connectOnce(current).catch((err: unknown) => ({ ended: 'failed' as const, err, connected: false }));
          teardown();
          if (cancelled) return;
          if (outcome.ended === 'closed') return setState({ kind: 'disconnected' });
          const failure = failureOf(outcome.err);
          const renewNow = renewRef.current;
          if (!failure.retry || !renewNow || attempt >= RDP_MAX_RETRIES) {
            return setState(failure.state);
          }
          setState({ kind: 'retrying', attempt: attempt + 1, max: RDP_MAX_RETRIES });
          await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
          if (cancelled) return;
          try {
            // A renewal no process answers (the one asked died, the balancer has not left it out yet) is asked again, as the VNC page's.
            current = await renewWithin(renewNow, { boundMs: RECONNECT_BOUND_MS, signal: gone.signal });
          } catch {
            return setState(failure.state);
          }
          if (cancelled) return;
        }
      })();
    }, 0); // deferred: a mount undone at once (development's double effects) must not spend the one-time token
    const onOffline = () => markUnstable();
    window.addEventListener('offline', onOffline);
    return () => {
      cancelled = true;
      gone.abort();
      clearTimeout(timer);
      clearTimeout(unstableTimer);
      window.removeEventListener('offline', onOffline);
      teardown();
    };
  }, [ticket, screen, generation]);

  const retry = useCallback(() => setGeneration((g) => g + 1), []);
  return { state, ui: uiRef, element: elementRef, clipboard, retry };
}

import { useEffect, useRef, useState, type RefObject } from 'react';
import RFB from '@novnc/novnc';
import type { TBrowserViewerTicket } from '@vdi/contracts';
import { closeReasonOf, vncSocketUrl } from './ticket';

export type VncStatus = 'idle' | 'connecting' | 'connected' | 'disconnected';
export type VncEnd = 'closed' | 'failed' | 'denied';

/**
 * One noVNC connection to a desktop's screen, drawn into `screen`, for as long as a ticket is
 * given (null disconnects). Used by the full-page viewer and by the videowall's tiles; view-only
 * can change without reconnecting.
 */
export function useVnc(screen: RefObject<HTMLDivElement | null>, ticket: TBrowserViewerTicket | null, opts: { viewOnly?: boolean; focus?: boolean } = {}) {
  const rfbRef = useRef<RFB | null>(null);
  const [status, setStatus] = useState<VncStatus>(ticket ? 'connecting' : 'idle');
  const [ended, setEnded] = useState<VncEnd | null>(null);
  const [reason, setReason] = useState<string | null>(null);
  /** The websocket's close code once disconnected (1006: it went away without a close frame). */
  const [code, setCode] = useState<number | null>(null);
  /** The last text the desktop put on its clipboard (ServerCutText). */
  const [clipboard, setClipboard] = useState<string | null>(null);
  const viewOnly = Boolean(opts.viewOnly);
  const focus = opts.focus ?? !viewOnly;
  const viewOnlyRef = useRef(viewOnly);
  viewOnlyRef.current = viewOnly;
  const focusRef = useRef(focus);
  focusRef.current = focus;

  useEffect(() => {
    const el = screen.current;
    if (!ticket || !el) {
      setStatus('idle');
      return;
    }
    setStatus('connecting');
    setEnded(null);
    setReason(null);
    setCode(null);
    let rfb: RFB | null = null;
    let denied = false;
    let closedWith: string | null = null;
    let closeCode = 1006;
    // Deferred: a mount that is undone at once (development's double effects) must not spend the one-time token.
    const timer = setTimeout(() => {
      // Our own socket, handed to noVNC: its close code and reason tell why the screen is not there.
      const socket = new WebSocket(vncSocketUrl(window.location, ticket.token));
      socket.addEventListener('close', (e) => {
        closedWith = closeReasonOf(e);
        closeCode = e.code;
      });
      rfb = new RFB(el, socket, {
        credentials: { password: ticket.password, username: '', target: '' },
      });
      rfb.scaleViewport = true;
      rfb.resizeSession = false;
      rfb.viewOnly = viewOnlyRef.current;
      rfb.background = '#0b0c10';
      rfb.addEventListener('connect', () => {
        setStatus('connected');
        if (focusRef.current) rfb?.focus();
      });
      rfb.addEventListener('clipboard', (e) => setClipboard(e.detail.text));
      rfb.addEventListener('securityfailure', () => {
        denied = true;
      });
      rfb.addEventListener('credentialsrequired', () => {
        rfb?.sendCredentials({ password: ticket.password, username: '', target: '' });
      });
      rfb.addEventListener('disconnect', (e) => {
        setStatus('disconnected');
        setReason(closedWith);
        setCode(closeCode);
        setEnded(denied ? 'denied' : closedWith ? 'failed' : e.detail.clean ? 'closed' : 'failed');
        rfbRef.current = null;
      });
      rfbRef.current = rfb;
    }, 0);
    return () => {
      clearTimeout(timer);
      if (rfb) {
        const r = rfb;
        rfb = null;
        rfbRef.current = null;
        try {
          r.disconnect();
        } catch {
          /* already closed */
        }
      }
    };
  }, [ticket, screen]);

  useEffect(() => {
    const r = rfbRef.current;
    if (!r) return;
    r.viewOnly = viewOnly;
    if (!viewOnly && focus) r.focus();
  }, [viewOnly, focus]);

  return { status, ended, reason, code, clipboard, rfb: rfbRef };
}

import { RDP_WEBSOCKET_PATH, VNC_CLOSE, ZBrowserViewerTicket, ZRdpViewerTicket, VNC_WEBSOCKET_PATH, type TBrowserViewerTicket, type TRdpViewerTicket } from '@vdi/contracts';

/** base64url → text (UTF-8). */
function fromBase64Url(s: string): string {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** text → base64url (UTF-8), without padding. */
export function toBase64Url(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A ticket of `schema` carried as base64url JSON (a fragment or a cookie value), or null when missing or malformed. */
function decodeWith<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }, fragment: string): T | null {
  const raw = fragment.replace(/^#/, '').trim();
  if (!raw) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(fromBase64Url(decodeURIComponent(raw))));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The viewer ticket carried in the URL fragment (#<base64url JSON>), or null when missing or malformed. */
export const decodeTicket = (fragment: string): TBrowserViewerTicket | null => decodeWith(ZBrowserViewerTicket, fragment);
/** The browser RDP page's ticket, likewise. */
export const decodeRdpTicket = (fragment: string): TRdpViewerTicket | null => decodeWith(ZRdpViewerTicket, fragment);

export const encodeTicket = (t: TBrowserViewerTicket) => toBase64Url(JSON.stringify(t));

/** The cookie in which clients of the original system hand the viewer answer's `cookie` to the viewer page. */
export const BROWSER_VIEWER_COOKIE = 'browser_viewer';

/** The value of the browser_viewer cookie in a `document.cookie` string, or null. */
export function browserViewerCookie(cookies: string): string | null {
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === BROWSER_VIEWER_COOKIE) return part.slice(eq + 1).trim();
  }
  return null;
}

/** The page's ticket: the fragment when there is one (our own pages), else the browser_viewer cookie. */
export function ticketFromPage(fragment: string, cookies: string): TBrowserViewerTicket | null {
  return fromPage(decodeTicket, fragment, cookies);
}
export function rdpTicketFromPage(fragment: string, cookies: string): TRdpViewerTicket | null {
  return fromPage(decodeRdpTicket, fragment, cookies);
}
function fromPage<T>(decode: (s: string) => T | null, fragment: string, cookies: string): T | null {
  if (fragment.replace(/^#/, '').trim()) return decode(fragment);
  const cookie = browserViewerCookie(cookies);
  return cookie ? decode(cookie) : null;
}

/** Deletes the browser_viewer cookie, whichever path the client set it on (this page's or the root). */
export function forgetBrowserViewerCookie() {
  const expired = `${BROWSER_VIEWER_COOKIE}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; SameSite=Strict`;
  const dirs = window.location.pathname.split('/').slice(0, -1);
  const paths = new Set(['/', ...dirs.map((_, i) => dirs.slice(0, i + 1).join('/') || '/')]);
  for (const path of paths) document.cookie = `${expired}; path=${path}`;
  document.cookie = expired;
}

/** The websocket address of the VNC bridge on this page's origin. */
export function vncSocketUrl(loc: Pick<Location, 'protocol' | 'host'>, token: string): string {
  const scheme = loc.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${loc.host}${VNC_WEBSOCKET_PATH}?token=${encodeURIComponent(token)}`;
}

/** The description_code the bridge closed the viewer websocket with (the screen unreachable, or no
 *  answer in time), or null for any other close. */
export function closeReasonOf(e: { code: number; reason: string }): string | null {
  return Object.values(VNC_CLOSE).some((c) => c.code === e.code && c.reason === e.reason) ? e.reason : null;
}

/** The RDCleanPath websocket of the browser RDP viewer on this page's origin (the token goes inside the first message). */
export function rdpSocketUrl(loc: Pick<Location, 'protocol' | 'host'>): string {
  const scheme = loc.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${loc.host}${RDP_WEBSOCKET_PATH}`;
}

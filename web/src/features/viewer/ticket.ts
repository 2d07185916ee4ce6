import { ZBrowserViewerTicket, VNC_WEBSOCKET_PATH, type TBrowserViewerTicket } from '@vdi/contracts';

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

/** The viewer ticket carried in the URL fragment (#<base64url JSON>), or null when missing or malformed. */
export function decodeTicket(fragment: string): TBrowserViewerTicket | null {
  const raw = fragment.replace(/^#/, '').trim();
  if (!raw) return null;
  try {
    const parsed = ZBrowserViewerTicket.safeParse(JSON.parse(fromBase64Url(decodeURIComponent(raw))));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export const encodeTicket = (t: TBrowserViewerTicket) => toBase64Url(JSON.stringify(t));

/** The websocket address of the VNC bridge on this page's origin. */
export function vncSocketUrl(loc: Pick<Location, 'protocol' | 'host'>, token: string): string {
  const scheme = loc.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${loc.host}${VNC_WEBSOCKET_PATH}?token=${encodeURIComponent(token)}`;
}

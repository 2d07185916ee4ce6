import type { IronError } from '@devolutions/iron-remote-desktop';

/** The browser RDP page's states (spec: connecting, disconnected, unstable, error, retrying n of max, cookie missing, cookie expired, rdp-not-running). */
export type RdpState =
  | { kind: 'connecting' }
  | { kind: 'connected'; unstable: boolean }
  | { kind: 'retrying'; attempt: number; max: number }
  | { kind: 'disconnected' }
  | { kind: 'error'; detail: 'logon' | 'refused' | 'not_running_desktop' | 'general' }
  | { kind: 'cookie-missing' }
  | { kind: 'cookie-expired' }
  | { kind: 'rdp-not-running' };

/** IronErrorKind values (the enum is declared, not exported as a value, by the package). */
const KIND = { general: 0, wrongPassword: 1, logonFailure: 2, accessDenied: 3, rdcleanpath: 4, proxyConnect: 5, negotiation: 6 } as const;
/** Winsock codes the proxy answers for a desktop whose RDP service does not answer. */
const NOT_LISTENING = [10061, 10060, 10065, 10051];

const isIronError = (e: unknown): e is IronError =>
  typeof e === 'object' && e !== null && typeof (e as IronError).kind === 'function';

/** What a failed connection means for the page, and whether trying again (with a new ticket) may help. */
export function failureOf(err: unknown): { state: Exclude<RdpState, { kind: 'connecting' | 'connected' | 'retrying' | 'disconnected' }>; retry: boolean } {
  if (!isIronError(err)) return { state: { kind: 'error', detail: 'general' }, retry: true };
  const kind = err.kind() as number;
  const details = err.rdcleanpathDetails?.();
  if (kind === KIND.wrongPassword || kind === KIND.logonFailure) return { state: { kind: 'error', detail: 'logon' }, retry: false };
  if (details?.httpStatusCode === 401) return { state: { kind: 'cookie-expired' }, retry: false };
  if (details?.httpStatusCode === 409) return { state: { kind: 'error', detail: 'not_running_desktop' }, retry: false };
  if (details?.httpStatusCode === 403 || kind === KIND.accessDenied) return { state: { kind: 'error', detail: 'refused' }, retry: false };
  if (details?.wsaErrorCode !== undefined && NOT_LISTENING.includes(details.wsaErrorCode)) return { state: { kind: 'rdp-not-running' }, retry: true };
  if (details?.httpStatusCode === 502) return { state: { kind: 'rdp-not-running' }, retry: true };
  return { state: { kind: 'error', detail: 'general' }, retry: true };
}

/**
 * The desktop size asked of the server for a screen area: the area itself, its width rounded
 * down to a multiple of 4 (servers pad bitmap rows to it), within what RDP accepts. (Sheared
 * images from xrdp were not a matter of size: the proxy crops its padded bitmaps, server/src/rdp/bitmap-fix.ts.)
 */
export function desktopSizeFor(width: number, height: number): { width: number; height: number } {
  const w = Math.max(640, Math.min(4096, Math.floor(width / 4) * 4));
  const h = Math.max(480, Math.min(2048, Math.floor(height / 2) * 2));
  return { width: w, height: h };
}

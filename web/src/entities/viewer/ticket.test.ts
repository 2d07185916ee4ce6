import { describe, expect, it } from 'vitest';
import { VNC_CLOSE } from '@vdi/contracts';
import { browserViewerCookie, closeReasonOf, decodeRdpTicket, decodeTicket, encodeTicket, rdpSocketUrl, rdpTicketFromPage, ticketFromPage, toBase64Url, vncSocketUrl } from './ticket';

const ticket = { token: 'tok-123', password: 'pw/+=8ch', name: 'Écriture – lab 1', desktopId: 'd-1' };

describe('viewer ticket in the fragment', () => {
  it('round-trips base64url JSON, including non-ASCII names', () => {
    const enc = encodeTicket(ticket);
    expect(enc).not.toMatch(/[+/=]/);
    expect(decodeTicket(`#${enc}`)).toEqual(ticket);
    expect(decodeTicket(enc)).toEqual(ticket);
  });
  it('accepts padded or standard base64 too', () => {
    const b64 = btoa(unescape(encodeURIComponent(JSON.stringify(ticket))));
    expect(decodeTicket(b64)).toEqual(ticket);
  });
  it('refuses missing, broken or incomplete tickets', () => {
    expect(decodeTicket('')).toBeNull();
    expect(decodeTicket('#')).toBeNull();
    expect(decodeTicket('#not-base64!!')).toBeNull();
    expect(decodeTicket(toBase64Url('{"token":"x"}'))).toBeNull();
    expect(decodeTicket(toBase64Url('not json'))).toBeNull();
  });
  it('builds the websocket address on the page origin', () => {
    expect(vncSocketUrl({ protocol: 'http:', host: 'localhost:8080' }, 'a b')).toBe('ws://localhost:8080/api/v3/vnc?token=a%20b');
    expect(vncSocketUrl({ protocol: 'https:', host: 'vdi.example' }, 't')).toBe('wss://vdi.example/api/v3/vnc?token=t');
  });
  it('takes the ticket from the browser_viewer cookie when there is no fragment (clients of the original system)', () => {
    const enc = encodeTicket(ticket);
    expect(browserViewerCookie(`theme=dark; browser_viewer=${enc}; token=x`)).toBe(enc);
    expect(browserViewerCookie('browser_viewer_old=1')).toBeNull();
    expect(ticketFromPage('', `token=abc; browser_viewer=${enc}`)).toEqual(ticket);
    expect(ticketFromPage('', `browser_viewer=${encodeURIComponent(enc)}`)).toEqual(ticket);
    // The fragment wins; without either there is no ticket.
    const other = { ...ticket, token: 'other' };
    expect(ticketFromPage(`#${encodeTicket(other)}`, `browser_viewer=${enc}`)).toEqual(other);
    expect(ticketFromPage('', 'token=abc')).toBeNull();
    expect(ticketFromPage('', 'browser_viewer=garbage')).toBeNull();
  });
  it("reads the bridge's close reason only from its own close codes", () => {
    expect(closeReasonOf(VNC_CLOSE.timeout)).toBe('viewer_display_timeout');
    expect(closeReasonOf(VNC_CLOSE.unreachable)).toBe('viewer_display_unreachable');
    expect(closeReasonOf({ code: 1000, reason: 'display closed' })).toBeNull();
    expect(closeReasonOf({ code: 4502, reason: 'anything else' })).toBeNull();
    expect(closeReasonOf({ code: 1006, reason: '' })).toBeNull();
  });
});

describe('browser RDP ticket', () => {
  const rdp = { token: 't', username: 'isard', password: 'pirineus', destination: '10.2.0.5:3389', name: 'Windows lab', desktopId: 'd-2', exp: 1_900_000_000 };
  const enc = toBase64Url(JSON.stringify(rdp));
  it('is read from the fragment, else from the browser_viewer cookie', () => {
    expect(rdpTicketFromPage(`#${enc}`, '')).toEqual(rdp);
    expect(rdpTicketFromPage('', `a=1; browser_viewer=${enc}`)).toEqual(rdp);
    expect(rdpTicketFromPage('', '')).toBeNull();
  });
  it('a VNC ticket is not an RDP ticket', () => {
    expect(decodeRdpTicket(encodeTicket(ticket))).toBeNull();
  });
  it('the websocket is the portal’s own, with no token in its address', () => {
    expect(rdpSocketUrl({ protocol: 'https:', host: 'vdi.example.org' })).toBe('wss://vdi.example.org/api/v3/rdp');
    expect(rdpSocketUrl({ protocol: 'http:', host: '127.0.0.1:8080' })).toBe('ws://127.0.0.1:8080/api/v3/rdp');
  });
});

import { describe, expect, it } from 'vitest';
import { decodeTicket, encodeTicket, toBase64Url, vncSocketUrl } from './ticket';

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
});

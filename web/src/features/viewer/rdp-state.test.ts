import { describe, expect, it } from 'vitest';
import { desktopSizeFor, failureOf } from './rdp-state';

const ironError = (kind: number, details?: { httpStatusCode?: number; wsaErrorCode?: number }) => ({
  kind: () => kind,
  backtrace: () => '',
  rdcleanpathDetails: () => details,
});

describe('browser RDP failures', () => {
  it('a spent or expired ticket is "cookie expired" and is not retried with the same ticket', () => {
    expect(failureOf(ironError(4, { httpStatusCode: 401 }))).toEqual({ state: { kind: 'cookie-expired' }, retry: false });
  });
  it('a desktop whose RDP service refuses or does not answer is "rdp-not-running", worth retrying', () => {
    expect(failureOf(ironError(4, { httpStatusCode: 502, wsaErrorCode: 10061 }))).toEqual({ state: { kind: 'rdp-not-running' }, retry: true });
    expect(failureOf(ironError(4, { httpStatusCode: 502, wsaErrorCode: 10060 })).state.kind).toBe('rdp-not-running');
    expect(failureOf(ironError(4, { httpStatusCode: 502 })).state.kind).toBe('rdp-not-running');
  });
  it('refused credentials, a refused destination and a stopped desktop are errors not retried', () => {
    expect(failureOf(ironError(1))).toEqual({ state: { kind: 'error', detail: 'logon' }, retry: false });
    expect(failureOf(ironError(4, { httpStatusCode: 403 }))).toEqual({ state: { kind: 'error', detail: 'refused' }, retry: false });
    expect(failureOf(ironError(4, { httpStatusCode: 409 }))).toEqual({ state: { kind: 'error', detail: 'not_running_desktop' }, retry: false });
  });
  it('anything else (a lost websocket, a thrown error) is a general error, retried', () => {
    expect(failureOf(new Error('socket closed'))).toEqual({ state: { kind: 'error', detail: 'general' }, retry: true });
    expect(failureOf(ironError(0))).toEqual({ state: { kind: 'error', detail: 'general' }, retry: true });
  });
});

describe('desktop size for the window', () => {
  it('is the screen area, width a multiple of 4, within RDP bounds', () => {
    expect(desktopSizeFor(1366, 705)).toEqual({ width: 1364, height: 704 });
    expect(desktopSizeFor(390, 300)).toEqual({ width: 640, height: 480 });
    expect(desktopSizeFor(9000, 5000)).toEqual({ width: 4096, height: 2048 });
  });
});

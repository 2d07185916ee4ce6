import { describe, expect, it } from 'vitest';
import { codeFromPath, directViewer, mergeDirectUpdate } from './api';

describe('direct viewer helpers', () => {
  it('takes the code from the path', () => {
    expect(codeFromPath('abc_DEF-123')).toBe('abc_DEF-123');
    expect(codeFromPath('abc/')).toBe('abc');
    expect(codeFromPath(undefined)).toBe('');
  });
  it('picks a usable viewer answer only', () => {
    const base = { desktopId: 'd', jwt: 'j', vmName: 'n', vmDescription: '', vmState: 'Started', scheduled: { shutdown: false as const }, force_stop_at: null, needs_booking: false, next_booking_start: null, next_booking_end: null };
    const data = {
      ...base,
      viewers: {
        'browser-vnc': { kind: 'browser', protocol: 'vnc', viewer: '/viewer/vnc', urlp: '/viewer/vnc#c', cookie: 'c', values: {} },
        'file-spice': { kind: 'file', protocol: 'spice' },
      },
    };
    expect(directViewer(data, 'browser-vnc')).toMatchObject({ kind: 'browser', viewer: '/viewer/vnc' });
    expect(directViewer(data, 'file-spice')).toBeNull();
    expect(directViewer(undefined, 'browser-vnc')).toBeNull();
  });

  it('merges live updates without losing the token or the viewers of a running desktop', () => {
    const base = { desktopId: 'd', vmName: 'n', vmDescription: '', scheduled: { shutdown: false as const }, force_stop_at: null, needs_booking: false, next_booking_start: null, next_booking_end: null };
    const prev = { ...base, jwt: 'j', vmState: 'Started', viewers: { 'browser-vnc': { kind: 'browser' } } };
    expect(mergeDirectUpdate(prev, { ...base, jwt: '', vmState: 'WaitingIP', viewers: {} })).toMatchObject({ jwt: 'j', vmState: 'WaitingIP', viewers: prev.viewers });
    expect(mergeDirectUpdate(prev, { ...base, jwt: '', vmState: 'Shutting-down', viewers: {} })).toMatchObject({ jwt: 'j', viewers: {} });
    expect(mergeDirectUpdate(undefined, { ...base, jwt: '', vmState: 'Stopped', viewers: {} }).vmState).toBe('Stopped');
  });
});

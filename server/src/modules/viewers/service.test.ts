import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppContext } from '../../context';
import type { MachineRuntime } from '../../engine/driver';
import type { DomainRow } from '../shared/domains';
import { readyVncPasswords, sharedVncPassword } from './service';

const drawn: string[] = [];
vi.mock('../../engine/vnc-client', () => ({
  drawScreenOnce: async (endpoint: { socket: string }, password: string) => {
    drawn.push(`${endpoint.socket}:${password}`);
  },
}));

/** A server process as the VNC password sees it: the installation's secret and the QEMU it sets passwords on. */
function processOf(secret: string, qemu: { password?: string; sets: number }) {
  const setViewerPassword = async (_id: string, _protocol: string, password: string) => {
    qemu.password = password;
    qemu.sets++;
  };
  const list = async () => [{ id: 'd1', pid: 42, startedAt: new Date('2026-01-01T10:00:00Z'), vnc: { socket: '/run/d1/vnc.sock' } }];
  return { config: { secret }, engine: { driver: { setViewerPassword, list } }, log: { debug: () => undefined } } as unknown as AppContext;
}

/** `processOf` with several machines running. */
function processOfMany(secret: string, qemu: { password?: string; sets: number }, ids: string[]) {
  const ctx = processOf(secret, qemu);
  const list = async () => ids.map((id) => ({ id, pid: 42, startedAt: new Date('2026-01-01T10:00:00Z'), vnc: { socket: `/run/${id}/vnc.sock` } }));
  return { ...ctx, engine: { driver: { ...ctx.engine.driver, list } } } as unknown as AppContext;
}

describe('the VNC password of a running desktop', () => {
  const runtime: MachineRuntime = { id: 'd1', pid: 42, startedAt: new Date('2026-01-01T10:00:00Z') };
  const row = { id: 'd1', startedAt: new Date('2026-01-01T10:00:00Z') } as DomainRow;

  it('is the same from every process of the installation: a ticket of one never locks out a viewer of another', async () => {
    const qemu = { sets: 0 } as { password?: string; sets: number };
    const a = processOf('secret', qemu);
    const b = processOf('secret', qemu);
    const first = await sharedVncPassword(a, row, runtime);
    const second = await sharedVncPassword(b, row, runtime);
    expect(second).toBe(first);
    expect(qemu.password).toBe(first);
    expect(first).toMatch(/^[A-Za-z2-9]{8}$/);
    // A process sets it once while its setting is fresh.
    await sharedVncPassword(a, row, runtime);
    expect(qemu.sets).toBe(2);
  });

  it('changes with the run of the desktop and with the installation', async () => {
    const qemu = { sets: 0 };
    const a = processOf('secret', qemu);
    const first = await sharedVncPassword(a, row, runtime);
    const restarted = { ...row, startedAt: new Date('2026-01-01T11:00:00Z') } as DomainRow;
    expect(await sharedVncPassword(a, restarted, { ...runtime, startedAt: restarted.startedAt! })).not.toBe(first);
    expect(await sharedVncPassword(processOf('other', qemu), row, runtime)).not.toBe(first);
  });

  afterEach(() => vi.useRealTimers());

  it("a pool's pass sets it again ahead of a ticket: a ticket soon after asks the machine nothing", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const launched = new Date('2026-01-01T10:00:00Z').getTime();
    vi.setSystemTime(launched);
    const qemu = { sets: 0 };
    const a = processOf('secret', qemu);
    await sharedVncPassword(a, row, runtime); // set at the launch: lives 300 s
    // 165 s later (a class of guests booted meanwhile): a ticket would not set it yet (135 s left), a pass does (30 s ahead).
    vi.setSystemTime(launched + 165_000);
    await sharedVncPassword(a, row, runtime);
    expect(qemu.sets).toBe(1);
    await sharedVncPassword(a, row, runtime, 30);
    expect(qemu.sets).toBe(2);
    // The tickets of the next passes' interval find it fresh (the ticket's own reset point is 120 s before its end).
    vi.setSystemTime(launched + 165_000 + 175_000);
    await sharedVncPassword(a, row, runtime);
    expect(qemu.sets).toBe(2);
  });

  it("a pool's pass draws a prepared screen once a while, after its password is set: its first viewer is not the machine's first", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const launched = new Date('2026-01-01T10:00:00Z').getTime();
    vi.setSystemTime(launched + 20_000);
    drawn.length = 0;
    const qemu = { password: undefined as string | undefined, sets: 0 };
    const a = processOf('secret', qemu);
    await readyVncPasswords(a, [row], 30, { everyMs: 60_000 });
    expect(drawn).toEqual([`/run/d1/vnc.sock:${qemu.password}`]);
    // The next passes within the minute leave it; a pass after it draws it again (its guest may have drawn since).
    vi.setSystemTime(launched + 50_000);
    await readyVncPasswords(a, [row], 30, { everyMs: 60_000 });
    expect(drawn).toHaveLength(1);
    vi.setSystemTime(launched + 81_000);
    await readyVncPasswords(a, [row], 30, { everyMs: 60_000 });
    expect(drawn).toHaveLength(2);
    // A ticket's setting (no drawing asked) draws nothing.
    vi.setSystemTime(launched + 200_000);
    await readyVncPasswords(a, [row]);
    expect(drawn).toHaveLength(2);
  });

  it('a round of drawing stops as soon as it is told the pool gives now, and the next quiet pass draws what it left', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T10:00:20Z'));
    drawn.length = 0;
    const rows = ['d1', 'd2', 'd3'].map((id) => ({ id, startedAt: new Date('2026-01-01T10:00:00Z') }) as DomainRow);
    const a = processOfMany('secret', { sets: 0 }, rows.map((r) => r.id));
    let giving = false;
    // A class starts taking desktops after the first screen is drawn.
    await readyVncPasswords(a, rows, 30, { everyMs: 60_000, quiet: () => (drawn.length === 1 && (giving = true), !giving) });
    expect(drawn.map((x) => x.split(':')[0])).toEqual(['/run/d1/vnc.sock']);
    giving = false;
    await readyVncPasswords(a, rows, 30, { everyMs: 60_000, quiet: () => !giving });
    expect(drawn.map((x) => x.split(':')[0])).toEqual(['/run/d1/vnc.sock', '/run/d2/vnc.sock', '/run/d3/vnc.sock']);
  });
});

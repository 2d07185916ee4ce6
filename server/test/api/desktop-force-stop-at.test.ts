import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { QemuDriver } from '../../src/engine/qemu/qemu-driver';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { socketOf, until } from '../helpers/wait';

/**
 * "Shutting down" tells when it becomes a forced stop: `force_stop_at`, computed by the server at
 * the ACPI stop (plus SHUTDOWN_TIMEOUT_SECONDS), stored, in the lists and the live events, kept
 * across a restart of the server, and gone once the desktop is stopped.
 */
const TIMEOUT_S = 25;
let server: TestServer;
let uma: string;
let admin: string;

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1, env: { SHUTDOWN_TIMEOUT_SECONDS: String(TIMEOUT_S) } });
  [uma, admin] = [await loginToken(server, 'user'), await loginToken(server, 'admin')];
}, scaled(240_000));
afterAll(async () => {
  vi.restoreAllMocks();
  await server?.close();
});

type Desktop = { id: string; name: string; state: string; force_stop_at: string | null };
const desktops = async (): Promise<Desktop[]> => (await call(server, '/api/v3/user/desktops', { token: uma })).json();
const waitFor = (id: string, ok: (d: Desktop) => boolean, timeoutMs = 90_000) =>
  until(`desktop ${id} as expected`, async () => (await desktops()).find((x) => x.id === id && ok(x)), timeoutMs);

describe('force_stop_at', () => {
  it('is null unless shutting down; then the moment of the forced stop, live, in both lists, kept across a restart', async () => {
    const list = await desktops();
    expect(list.every((d) => d.force_stop_at === null)).toBe(true);
    const d = list.find((x) => x.name === 'Demo desktop')!;
    await call(server, `/api/v3/desktop/start/${d.id}`, { token: uma });
    await waitFor(d.id, (x) => x.state === 'Started');

    // A guest that ignores the power button (as one at its login screen may): only the force stop ends it.
    vi.spyOn(QemuDriver.prototype, 'shutdown').mockResolvedValue(undefined);
    const socket = await socketOf(server, uma);
    const live = new Promise<Desktop>((resolve) =>
      socket.on('desktop_update', (raw: string | Desktop) => {
        const x = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Desktop;
        if (x.id === d.id && x.state === 'Shutting-down') resolve(x);
      }),
    );
    const before = Date.now();
    expect(await (await call(server, `/api/v3/desktop/stop/${d.id}`, { token: uma })).json()).toEqual({ status: 'Shutting-down' });
    const after = Date.now();

    const shown = await waitFor(d.id, (x) => x.state === 'Shutting-down');
    const at = Date.parse(shown.force_stop_at!);
    expect(shown.force_stop_at).toBe(new Date(at).toISOString());
    expect(at).toBeGreaterThanOrEqual(before + TIMEOUT_S * 1000 - 1000);
    expect(at).toBeLessThanOrEqual(after + TIMEOUT_S * 1000 + 1000);
    // The live event and the admin console say the same moment; so does the database.
    expect((await live).force_stop_at).toBe(shown.force_stop_at);
    socket.close();
    const adminList = await (await call(server, `/api/v3/admin/desktops?search=${encodeURIComponent('Demo desktop')}&per_page=100`, { token: admin })).json();
    expect(adminList.items.find((x: { id: string }) => x.id === d.id)).toMatchObject({ status: 'Shutting-down', force_stop_at: shown.force_stop_at });
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, d.id));
    expect(row!.forceStopAt?.toISOString()).toBe(shown.force_stop_at);
    // The direct viewer (the public link) says it too.
    const link: string = await (await call(server, `/api/v3/desktop/jumperurl_reset/${d.id}`, { token: uma, method: 'PUT', body: { disabled: false } })).json();
    expect(await (await call(server, `/api/v3/direct/${link}`)).json()).toMatchObject({ vmState: 'Shutting-down', force_stop_at: shown.force_stop_at });

    // A restart of the server (the machine keeps running) keeps the same moment; a second window reads it too.
    await server.restart();
    const again = await waitFor(d.id, () => true);
    expect(again).toMatchObject({ state: 'Shutting-down', force_stop_at: shown.force_stop_at });

    // At that moment the server force-stops it; then the field is null again.
    const stopped = await waitFor(d.id, (x) => x.state === 'Stopped', (TIMEOUT_S + 90) * 1000);
    expect(Date.now()).toBeGreaterThanOrEqual(at - 1000);
    expect(stopped.force_stop_at).toBeNull();
    const [done] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, d.id));
    expect(done!.forceStopAt).toBeNull();
  }, scaled(240_000));
});

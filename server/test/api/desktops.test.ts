import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';
import { schema } from '../../src/db';
import { info } from '../../src/engine/disks';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
let uma: string; // the demo `user`
let sara: string; // student01
let admin: string;

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1 });
  [uma, sara, admin] = [await loginToken(server, 'user'), await loginToken(server, 'student01'), await loginToken(server, 'admin')];
}, scaled(240_000));
afterAll(async () => server?.close());

type Desktop = { id: string; name: string; state: string; type: string; viewers: string[]; storage: string[] };
const desktops = async (token: string): Promise<Desktop[]> => (await call(server, '/api/v3/user/desktops', { token })).json();
const act = (token: string, action: string, id: string) => call(server, `/api/v3/desktop/${action}/${id}`, { token });
async function waitState(token: string, id: string, state: string, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = (await desktops(token)).find((x) => x.id === id);
    if (d?.state === state) return d;
    if (Date.now() > until) throw new Error(`desktop ${id} is ${d?.state}, not ${state}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
const listen = (token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt: token }, reconnection: false });
    s.on('connect', () => resolve(s));
    s.on('connect_error', reject);
  });

describe('desktops', () => {
  it('lists the demo desktops, each on its own overlay of the read-only template disk', async () => {
    const list = await desktops(uma);
    expect(list.map((d) => d.name)).toEqual(['Demo desktop', 'GPU desktop', 'Lab desktop']);
    expect(list.every((d) => d.state === 'Stopped' && d.type === 'persistent')).toBe(true);
    expect(list[0]!.viewers).toEqual(['browser-vnc', 'file-spice']);
    const [disk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, list[0]!.storage[0]!));
    const [template] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.kind, 'template'));
    expect(disk!.parentId).toBe(template!.id);
    const chain = await info(disk!.path);
    expect(chain.backingFile).toBe(template!.path);
  });

  it('refuses actions on another user\'s desktop, and unknown ones', async () => {
    const [mine] = await desktops(uma);
    for (const action of ['start', 'stop', 'reset']) {
      const r = await act(sara, action, mine!.id);
      expect(r.status).toBe(403);
      expect((await r.json()).description_code).toBe('forbidden');
    }
    expect((await call(server, `/api/v3/desktop/${mine!.id}/viewer/browser-vnc`, { token: sara })).status).toBe(403);
    expect((await call(server, `/api/v3/desktop/${mine!.id}`, { token: sara, method: 'DELETE' })).status).toBe(403);
    expect((await act(uma, 'start', 'no-such-desktop')).status).toBe(404);
    expect((await act(uma, 'explode', mine!.id)).status).toBe(400);
  });

  it('answers the spec codes for actions the state does not offer', async () => {
    const [d] = await desktops(uma);
    for (const action of ['stop', 'reset', 'retry']) {
      const r = await act(uma, action, d!.id);
      expect(r.status).toBe(409);
      expect((await r.json()).description_code).toBe('desktop_action_not_available');
    }
    expect((await call(server, `/api/v3/desktop/${d!.id}/viewer/browser-vnc`, { token: uma })).status).toBe(428);
  });

  it('starts a real machine, tells it live, opens VNC once with its token, stops, and force stops', async () => {
    const [d] = await desktops(uma);
    const socket = await listen(uma);
    const states: string[] = [];
    socket.on('desktop_update', (raw: string) => {
      const p = JSON.parse(raw);
      if (p.id === d!.id) states.push(p.state);
    });
    const r = await act(uma, 'start', d!.id);
    expect(await r.json()).toEqual({ status: 'Starting' });
    expect((await act(uma, 'start', d!.id)).status).toBe(409);
    await waitState(uma, d!.id, 'Started');
    expect(states.slice(0, 2)).toEqual(['Starting', 'Started']);
    expect(await server.ctx.engine.driver.status(d!.id)).toBe('running');

    // The browser viewer: a one-time token, good once.
    const viewer = await (await call(server, `/api/v3/desktop/${d!.id}/viewer/browser-vnc`, { token: uma })).json();
    expect(viewer).toMatchObject({ kind: 'browser', protocol: 'vnc', viewer: '/viewer/vnc' });
    const ticket = JSON.parse(Buffer.from(viewer.cookie, 'base64url').toString());
    expect(ticket.password).toHaveLength(8);
    // SPICE is on: the guest's clipboard agent talks to SPICE, so the browser viewer says it carries no clipboard.
    expect(ticket.clipboard).toBe(false);
    const wsUrl = `${server.url.replace('http', 'ws')}/api/v3/vnc?token=${ticket.token}`;
    const greeting = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(wsUrl);
      ws.on('message', (m: Buffer) => {
        resolve(m.toString('latin1'));
        ws.close();
      });
      ws.on('error', reject);
    });
    expect(greeting).toMatch(/^RFB 003\.00\d/);
    const again = await new Promise<number>((resolve) => {
      const ws = new WebSocket(wsUrl);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
    });
    expect(again).toBe(401);
    // ...and not after it expired.
    const late = await (await call(server, `/api/v3/desktop/${d!.id}/viewer/browser-vnc`, { token: uma })).json();
    const lateTicket = JSON.parse(Buffer.from(late.cookie, 'base64url').toString());
    await server.ctx.db.update(schema.viewerTokens).set({ expiresAt: new Date(Date.now() - 1000) });
    const expired = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/v3/vnc?token=${lateTicket.token}`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
    });
    expect(expired).toBe(401);

    // SPICE: a .vv file with a one-time password, reached through the portal's CONNECT proxy.
    const spice = await (await call(server, `/api/v3/desktop/${d!.id}/viewer/file-spice`, { token: uma })).json();
    expect(spice).toMatchObject({ kind: 'file', protocol: 'spice', ext: 'vv', mime: 'application/x-virt-viewer' });
    expect(spice.content).toMatch(/^\[virt-viewer\]\ntype=spice\nproxy=http:\/\/127\.0\.0\.1:\d+\nhost=127\.0\.0\.1\nport=\d+\npassword=\w{16}\n/);

    const png = await call(server, `/api/v3/desktop/${d!.id}/screenshot`, { token: uma });
    expect(png.headers.get('content-type')).toBe('image/png');

    // Stop (ACPI), then a second stop while shutting down is the force stop.
    expect(await (await act(uma, 'stop', d!.id)).json()).toEqual({ status: 'Shutting-down' });
    expect(await (await act(uma, 'stop', d!.id)).json()).toEqual({ status: 'Stopping' });
    await waitState(uma, d!.id, 'Stopped');
    expect(await server.ctx.engine.driver.status(d!.id)).toBe('absent');
    expect(states).toContain('Shutting-down');
    socket.close();
  }, scaled(120_000));

  it('refuses a start over the running quota with 428 and the spec code', async () => {
    // Students 1A may run one desktop at a time (the GPU desktop would need a booking).
    const [first, second] = (await desktops(uma)).filter((d) => d.name !== 'GPU desktop');
    await act(uma, 'start', first!.id);
    await waitState(uma, first!.id, 'Started');
    const r = await act(uma, 'start', second!.id);
    expect(r.status).toBe(428);
    const body = await r.json();
    expect(body.description_code).toBe('desktop_start_user_quota_exceeded');
    // It names the running desktop that holds the quota (the portal offers to stop it).
    expect(body.params).toEqual({ running: 1, running_desktops: [{ id: first!.id, name: first!.name }] });
    await act(uma, 'stop', first!.id);
    await act(uma, 'stop', first!.id);
    await waitState(uma, first!.id, 'Stopped');
  }, scaled(120_000));

  it('makes a temporary desktop from a template, and it disappears when stopped', async () => {
    const templates = await (await call(server, '/api/v3/user/templates/allowed/all', { token: sara })).json();
    expect(templates.map((t: { name: string }) => t.name)).toEqual(['Demo Linux']);
    const { id } = await (await call(server, '/api/v3/nonpersistent', { token: sara, body: { template: templates[0].id } })).json();
    const d = await waitState(sara, id, 'Started');
    expect(d.type).toBe('nonpersistent');
    // Asking again gives the same one.
    expect((await (await call(server, '/api/v3/nonpersistent', { token: sara, body: { template: templates[0].id } })).json()).id).toBe(id);
    const [volatile] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, d.storage[0]!));
    expect(volatile!.kind).toBe('volatile');
    await act(sara, 'stop', id);
    await act(sara, 'stop', id);
    const until = Date.now() + scaled(20_000);
    while ((await desktops(sara)).some((x) => x.id === id) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    expect((await desktops(sara)).some((x) => x.id === id)).toBe(false);
    expect(await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, volatile!.id))).toEqual([]);
    const bad = await call(server, '/api/v3/nonpersistent', { token: sara, body: { template: 'nope' } });
    expect(bad.status).toBe(404);
    expect((await bad.json()).description_code).toBe('template_not_found');
  }, scaled(120_000));

  it('deletes a stopped desktop with its disk, and refuses a running one', async () => {
    const list = await desktops(admin);
    const d = list[0]!;
    const [disk] = await server.ctx.db.select().from(schema.storage).where(eq(schema.storage.id, d.storage[0]!));
    expect((await call(server, `/api/v3/desktop/${d.id}/permanent`, { token: admin, method: 'DELETE' })).status).toBe(200);
    expect((await desktops(admin)).some((x) => x.id === d.id)).toBe(false);
    const { existsSync } = await import('node:fs');
    expect(existsSync(disk!.path)).toBe(false);

    const [running] = await desktops(uma);
    await act(uma, 'start', running!.id);
    await waitState(uma, running!.id, 'Started');
    const refused = await call(server, `/api/v3/desktop/${running!.id}`, { token: uma, method: 'DELETE' });
    expect(refused.status).toBe(409);
    await act(uma, 'stop', running!.id);
    await act(uma, 'stop', running!.id);
    await waitState(uma, running!.id, 'Stopped');
  }, scaled(120_000));
});

describe('start queue and hypervisor room', () => {
  it('queues starts beyond the host\'s concurrency and tells each owner its position', async () => {
    const manager = await loginToken(server, 'manager');
    const advanced = await loginToken(server, 'advanced');
    const [m] = await desktops(manager);
    const [a] = await desktops(advanced);
    // Both starts are sent at once: whichever reaches the queue second waits, and its owner is told.
    const positions = new Map<string, number[]>();
    const sockets = await Promise.all([listen(manager), listen(advanced)]);
    for (const socket of sockets) {
      socket.on('desktops_queue', (raw: string) => {
        for (const e of Object.values(JSON.parse(raw) as Record<string, { desktop_id: string; position: number }>)) {
          positions.set(e.desktop_id, [...(positions.get(e.desktop_id) ?? []), e.position]);
        }
      });
    }
    try {
      await Promise.all([act(manager, 'start', m!.id), act(advanced, 'start', a!.id)]);
      await waitState(manager, m!.id, 'Started');
      await waitState(advanced, a!.id, 'Started');
      expect(positions.size).toBe(1);
      const [waited] = [...positions.values()];
      expect(waited![0]).toBe(1);
      expect(waited!.at(-1)).toBe(0);
    } finally {
      for (const [t, d] of [[manager, m!], [advanced, a!]] as const) {
        await act(t, 'stop', d.id);
        await act(t, 'stop', d.id);
        await waitState(t, d.id, 'Stopped');
      }
      for (const socket of sockets) socket.close();
    }
  }, scaled(120_000));

  it('a start left by a server process that is gone: its machine adopted if it runs, else the desktop failed', async () => {
    const manager = await loginToken(server, 'manager');
    const advanced = await loginToken(server, 'advanced');
    const [m] = await desktops(manager);
    const [a] = await desktops(advanced);
    const { driver } = server.ctx.engine;
    const status = driver.status;
    // (A machine the gone process had launched: this process's driver is told it runs.)
    driver.status = async (id) => (id === m!.id ? 'running' : status.call(driver, id));
    try {
      for (const d of [m!, a!]) {
        await server.ctx.db.update(schema.domains).set({ status: 'Starting', hypervisorId: 'local' }).where(eq(schema.domains.id, d.id));
        await server.ctx.db.insert(schema.startQueue).values({ desktopId: d.id, lane: 'local', startedAt: new Date(), runnerPid: 1, runnerSince: new Date(0) });
      }
      await waitState(manager, m!.id, 'Started');
      await waitState(advanced, a!.id, 'Failed');
      expect(await server.ctx.db.select().from(schema.startQueue)).toEqual([]);
    } finally {
      driver.status = status;
      for (const d of [m!, a!]) await server.ctx.db.update(schema.domains).set({ status: 'Stopped', hypervisorId: null, startedAt: null, currentAction: null }).where(eq(schema.domains.id, d.id));
    }
  });

  it('refuses to start when no hypervisor has room', async () => {
    const manager = await loginToken(server, 'manager');
    const [m] = await desktops(manager);
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, m!.id));
    await server.ctx.db.update(schema.domains).set({ hardware: { ...row!.hardware, memoryMb: 64 * 1024 * 1024 } }).where(eq(schema.domains.id, m!.id));
    try {
      const r = await act(manager, 'start', m!.id);
      expect(r.status).toBe(428);
      expect((await r.json()).description_code).toBe('hypervisors_not_available');
    } finally {
      await server.ctx.db.update(schema.domains).set({ hardware: row!.hardware }).where(eq(schema.domains.id, m!.id));
    }
  });
});

describe('direct viewer', () => {
  it('gives a link that opens the desktop without signing in, and 404s slowly once disabled', async () => {
    const [d] = await desktops(sara);
    expect(await (await call(server, `/api/v3/desktop/jumperurl/${d!.id}`, { token: sara })).json()).toEqual({ jumperurl: false });
    const token: string = await (await call(server, `/api/v3/desktop/jumperurl_reset/${d!.id}`, { token: sara, method: 'PUT', body: { disabled: false } })).json();
    expect(token.length).toBeGreaterThanOrEqual(43);
    expect((await call(server, `/api/v3/desktop/jumperurl_reset/${d!.id}`, { token: uma, method: 'PUT', body: { disabled: false } })).status).toBe(403);

    const direct = await (await call(server, `/api/v3/direct/${token}`)).json();
    expect(direct).toMatchObject({ desktopId: d!.id, vmName: 'Demo desktop', vmState: 'Started' });
    // Its jwt opens the live socket of that one desktop.
    const page = await listen(direct.jwt);
    const update = new Promise<{ vmState: string }>((resolve) => page.on('directviewer_update', (raw: string) => resolve(JSON.parse(raw))));
    expect(direct.viewers['browser-vnc']).toMatchObject({ kind: 'browser', protocol: 'vnc' });
    expect(direct.viewers['file-spice']).toMatchObject({ kind: 'file' });
    expect((await call(server, `/api/v3/direct/${token}/stop`, { method: 'PUT', body: {} })).status).toBe(200);
    expect((await update).vmState).toBe('Shutting-down');
    page.close();
    await call(server, `/api/v3/direct/${token}/stop`, { method: 'PUT', body: {} });
    await waitState(sara, d!.id, 'Stopped');

    await call(server, `/api/v3/desktop/jumperurl_reset/${d!.id}`, { token: sara, method: 'PUT', body: { disabled: true } });
    const t0 = Date.now();
    const gone = await call(server, `/api/v3/direct/${token}`);
    expect(gone.status).toBe(404);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2400);
    // The original's body, within the catalogue body every failure has.
    expect(await gone.json()).toMatchObject({ error: 'not_found', msg: 'Not found', description_code: 'not_found' });
  }, scaled(120_000));
});

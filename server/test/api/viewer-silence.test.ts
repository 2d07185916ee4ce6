// A browser viewer's websocket is never left silent: from its 101 on, every session gets the
// screen's first bytes (the RFB version) or a close with one of the viewer's reasons, whether it
// was opened just as the desktop came up, or just after a server restart adopted the running
// machine, one at a time or many together; and a machine that greets and then stops answering in
// the middle of the handshake gets the page a reason too, and the log a line.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { eq } from 'drizzle-orm';
import { VNC_CLOSE, VNC_FIRST_BYTES_MS } from '@vdi/contracts';
import { schema } from '../../src/db';
import { VNC_ANSWER_MS } from '../../src/engine/vnc-bridge';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { until } from '../helpers/wait';
import { vncTicket } from '../helpers/viewer-session';
import { scaled } from '../helpers/slowdown';

/** How long a session may stay silent after its 101: the product's bound, with room for timers on
 *  a loaded host. A session neither greeted nor closed is given three times this before it counts
 *  as silent (a close without a reason fails the test too). */
const SILENCE_MS = scaled(VNC_FIRST_BYTES_MS + 3000);
const REASONS = Object.values(VNC_CLOSE).map((c) => `${c.code} ${c.reason}`);

type Probe = {
  /** from the 101 to the first bytes or the close, or to SILENCE_MS * 3 when neither came */
  ms: number;
  outcome: 'greeted' | 'reason' | 'other-close' | 'silent' | 'refused';
  banner?: string;
  close?: string;
};

/** Opens the viewer websocket and reports what came first after the 101. */
function probe(server: TestServer, ticket: { token: string }): Promise<Probe> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/v3/vnc?token=${encodeURIComponent(ticket.token)}`);
    let opened = 0;
    let timer: NodeJS.Timeout | undefined;
    const done = (p: Probe) => {
      clearTimeout(timer);
      ws.removeAllListeners('message');
      ws.removeAllListeners('close');
      ws.terminate();
      resolve(p);
    };
    ws.on('error', () => undefined);
    ws.once('unexpected-response', (_req, res) => done({ ms: 0, outcome: 'refused', close: String(res.statusCode) }));
    ws.once('open', () => {
      opened = performance.now();
      timer = setTimeout(() => done({ ms: performance.now() - opened, outcome: 'silent' }), SILENCE_MS * 3);
    });
    ws.once('message', (data: Buffer) => done({ ms: performance.now() - opened, outcome: 'greeted', banner: data.subarray(0, 12).toString('latin1') }));
    ws.once('close', (code, reason) => {
      const close = `${code} ${reason.toString()}`;
      done({ ms: opened ? performance.now() - opened : 0, outcome: REASONS.includes(close) ? 'reason' : 'other-close', close });
    });
  });
}

function expectNoSilence(label: string, probes: Probe[]) {
  const summary = probes.map((p) => `${p.outcome}${p.close ? `(${p.close})` : ''} ${Math.round(p.ms)} ms`);
  console.log(`${label}: ${summary.join(', ')}`);
  for (const p of probes) {
    expect(['greeted', 'reason'], `${label}: ${summary.join(', ')}`).toContain(p.outcome);
    expect(p.ms, `${label}: ${summary.join(', ')}`).toBeLessThan(SILENCE_MS);
    if (p.banner) expect(p.banner).toMatch(/^RFB 003\.00\d\n$/);
  }
}

let server: TestServer;
let token: string;
let desktopId: string;

const stateOf = async () => (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, desktopId)))[0]?.status;

beforeAll(async () => {
  server = await startTestServer();
  token = await loginToken(server, 'admin');
  const [admin] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'admin'));
  desktopId = (await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.userId, admin!.id))).find((d) => d.kind === 'desktop')!.id;
}, scaled(240_000));

afterAll(async () => {
  await server?.close();
});

async function startAndWait() {
  const res = await call(server, `/api/v3/desktop/start/${desktopId}`, { token });
  expect(res.status).toBe(200);
  await until('the desktop to run', async () => (await stateOf()) === 'Started', 120_000);
}

async function stopAndWait() {
  for (let i = 0; i < 2; i++) await call(server, `/api/v3/desktop/stop/${desktopId}`, { token });
  await until('the desktop to stop', async () => (await stateOf()) === 'Stopped', 60_000);
}

describe('the browser viewer websocket after its 101', () => {
  it('is greeted or closed with a reason when opened as soon as the desktop runs', async () => {
    const probes: Probe[] = [];
    for (let i = 0; i < 6; i++) {
      await startAndWait();
      probes.push(await probe(server, await vncTicket(server, token, desktopId)));
      probes.push(await probe(server, await vncTicket(server, token, desktopId)));
      await stopAndWait();
    }
    expectNoSilence('fresh starts', probes);
  }, scaled(600_000));

  it('is greeted or closed with a reason right after a restart adopted the machine', async () => {
    await startAndWait();
    const probes: Probe[] = [];
    for (let round = 0; round < 3; round++) {
      await server.restart();
      token = await loginToken(server, 'admin');
      for (let i = 0; i < 4; i++) probes.push(await probe(server, await vncTicket(server, token, desktopId)));
      const tickets = await Promise.all(Array.from({ length: 4 }, () => vncTicket(server, token, desktopId)));
      probes.push(...(await Promise.all(tickets.map((t) => probe(server, t)))));
    }
    expectNoSilence('adopted', probes);
  }, scaled(600_000));

  it('is closed with a reason, and logged, when the machine stops answering after its greeting', async () => {
    if ((await stateOf()) !== 'Started') await startAndWait();
    const pid = (await server.ctx.engine.driver.list()).find((m) => m.id === desktopId)!.pid!;
    const warn = vi.spyOn(server.ctx.log, 'warn');
    const ticket = await vncTicket(server, token, desktopId);
    const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/v3/vnc?token=${encodeURIComponent(ticket.token)}`);
    const closed = new Promise<{ code: number; reason: string; at: number }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString(), at: performance.now() })));
    const greeting = await new Promise<Buffer>((r) => ws.once('message', (d: Buffer) => r(d)));
    expect(greeting.toString('latin1')).toMatch(/^RFB 003\.00\d\n$/);
    process.kill(pid, 'SIGSTOP'); // QEMU freezes between its greeting and its answer
    try {
      const asked = performance.now();
      ws.send(Buffer.from('RFB 003.008\n'));
      const cap = new Promise<{ code: number; reason: string; at: number }>((r) => setTimeout(() => r({ code: 0, reason: 'still open', at: performance.now() }), SILENCE_MS * 4));
      const end = await Promise.race([closed, cap]);
      expect(end).toMatchObject({ code: VNC_CLOSE.timeout.code, reason: 'viewer_display_timeout' });
      expect(end.at - asked).toBeLessThan(scaled(VNC_ANSWER_MS + 3000));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await until('the close to be logged', async () => warn.mock.calls.find((c) => JSON.stringify(c).includes('unanswered')), 10_000);
    const logged = JSON.stringify(warn.mock.calls);
    expect(logged).toContain('"why":"timeout"');
    expect(logged).not.toContain(ticket.token);
    expect(logged).not.toContain(ticket.password);
    warn.mockRestore();
    // The machine answers again: so does the next viewer.
    expectNoSilence('after the freeze', [await probe(server, await vncTicket(server, token, desktopId))]);
  }, scaled(120_000));
});

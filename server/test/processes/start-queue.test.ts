// The start queue shared by two server processes on one PostgreSQL (engine/start-queue.ts, the table
// start_queue), as two app instances in this test process: one start at a time on the host (START
// concurrency 1) whichever process it was pressed on, the installation's FIFO order and each owner's
// position, a queued start called off from the other process, and the death of a process (closed without any clean-up) while it runs one start and
// others wait: its start is cleared (the desktop failed: nothing runs it), the waiting ones run on the
// other. The hypervisor's start is a double here (held until the test lets it go): what is tested is
// the queue across processes, not QEMU.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import type { Socket } from 'socket.io-client';
import { schema } from '../../src/db';
import type { AppContext } from '../../src/context';
import { startPeerInstances, type PeerInstance } from '../helpers/peer-instances';
import { call, loginToken } from '../helpers/server';
import { socketOf, until } from '../helpers/wait';
import { scaled } from '../helpers/slowdown';

let a: PeerInstance;
let b: PeerInstance;
let peers: Awaited<ReturnType<typeof startPeerInstances>> | undefined;
const sockets: Socket[] = [];

/** Starts asked of the hypervisor, in order, by which instance; each held until the test lets it go. */
const asked: { id: string; by: string }[] = [];
const gates = new Map<string, { go: () => void; fail: (err: Error) => void }>();
const flying = new Map<string, string>();
const dead = new Set<string>();
let mostAtOnce = 0;

function holdStarts(ctx: AppContext, by: string) {
  ctx.engine.queue.setConcurrency(1);
  ctx.engine.driver.start = async (spec) => {
    asked.push({ id: spec.id, by });
    flying.set(spec.id, by);
    // A dead instance's start no longer counts: its slot is the queue's to give again.
    mostAtOnce = Math.max(mostAtOnce, [...flying.values()].filter((w) => !dead.has(w)).length);
    try {
      await new Promise<void>((go, fail) => gates.set(spec.id, { go, fail }));
      return { id: spec.id, startedAt: new Date(), host: spec.host };
    } finally {
      flying.delete(spec.id);
    }
  };
}

beforeAll(async () => {
  let n = 0;
  peers = await startPeerInstances({ tmpPrefix: 'i26startq-', prepare: (ctx) => holdStarts(ctx, n++ === 0 ? 'A' : 'B') });
  ({ a, b } = peers);
}, scaled(120_000));

afterAll(async () => {
  for (const s of sockets) s.close();
  for (const g of gates.values()) g.fail(new Error('test over'));
  await peers?.close();
}, scaled(60_000));

const statusOf = async (id: string) => (await a.database.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]?.status;

describe('the start queue across two server processes', () => {
  it('one start at a time on the host, FIFO across processes, and a dead process loses no waiting start', async () => {
    const people = ['admin', 'manager', 'advanced', 'user'];
    const desktops: string[] = [];
    const seen = new Map<string, number[]>();
    const tokens = new Map<string, string>();
    for (const username of people) {
      const [u] = await a.database.db.select().from(schema.users).where(and(eq(schema.users.username, username), eq(schema.users.categoryId, 'default')));
      const [d] = await a.database.db.select().from(schema.domains).where(and(eq(schema.domains.userId, u!.id), eq(schema.domains.kind, 'desktop')));
      desktops.push(d!.id);
      // Every owner listens on A: positions of starts pressed on B come through the socket adapter.
      // (One sign-in each: a second would end the first session and its socket.)
      tokens.set(username, await loginToken(a.server, username));
      const socket = await socketOf(a.server, tokens.get(username)!);
      sockets.push(socket);
      socket.on('desktops_queue', (raw: string) => {
        for (const e of Object.values(JSON.parse(raw) as Record<string, { desktop_id: string; position: number }>)) {
          const list = seen.get(e.desktop_id) ?? [];
          if (list.at(-1) !== e.position) list.push(e.position);
          seen.set(e.desktop_id, list);
        }
      });
    }
    const [d1, d2, d3, d4] = desktops as [string, string, string, string];
    const press = async (on: PeerInstance, username: string, id: string) => {
      const r = await call(on.server, `/api/v3/desktop/start/${id}`, { token: tokens.get(username) });
      expect(r.status).toBe(200);
    };

    // d1 on B runs there; d2 (A), d3 (B), d4 (A) wait, in the order pressed, whichever process took them.
    await press(b, 'admin', d1);
    await until('d1 asked of the host by B', async () => asked.some((s) => s.id === d1 && s.by === 'B'), 10_000);
    // A start pressed on A is called off on B (stop while queued): its owner sees it leave, then presses again.
    await press(a, 'manager', d2);
    await until('position 1 for d2', async () => seen.get(d2)?.[0] === 1, 10_000);
    const off = await call(b.server, `/api/v3/desktop/stop/${d2}`, { token: tokens.get('manager') });
    expect(await off.json()).toMatchObject({ status: 'Stopped' });
    await until('d2 left the queue', async () => seen.get(d2)?.at(-1) === 0, 10_000);
    expect(await statusOf(d2)).toBe('Stopped');
    seen.delete(d2);
    for (const [i, [on, username, id]] of ([[a, 'manager', d2], [b, 'advanced', d3], [a, 'user', d4]] as const).entries()) {
      await press(on, username, id);
      await until(`position ${i + 1} for ${username}`, async () => seen.get(id)?.[0] === i + 1, 10_000);
    }
    expect(asked.map((s) => s.id)).toEqual([d1]);
    expect((await a.server.ctx.engine.hosts.status('local'))?.startsInFlight).toBe(4);

    // B dies while it runs d1: no clean-up, its live connection gone (as kill -9 leaves PostgreSQL).
    dead.add('B');
    await b.server.app.close();
    await b.database.close();
    gates.get(d1)!.fail(new Error('the process died'));

    // A clears d1 (no machine runs it: failed), then runs d2, d3 (pressed on B) and d4, one at a time.
    await until('d1 cleared as failed', async () => (await statusOf(d1)) === 'Failed', 20_000);
    for (const id of [d2, d3, d4]) {
      await until(`${id} asked of the host`, async () => asked.at(-1)?.id === id && gates.has(id), 15_000);
      expect(asked.at(-1)!.by).toBe('A');
      gates.get(id)!.go();
      await until(`${id} started`, async () => (await statusOf(id)) === 'Started', 10_000);
    }
    expect(asked.map((s) => s.id)).toEqual([d1, d2, d3, d4]);
    expect(mostAtOnce).toBe(1);
    // Each owner saw the installation's order: its place, then one place up at each start before it, then 0.
    expect(seen.get(d2)).toEqual([1, 0]);
    expect(seen.get(d3)).toEqual([2, 1, 0]);
    expect(seen.get(d4)).toEqual([3, 2, 1, 0]);
    // The last start leaves the queue as it ends (a moment after its Started is written).
    await until('the queue empty', async () => (await a.database.db.select().from(schema.startQueue)).length === 0, 10_000);
  }, scaled(60_000));
});

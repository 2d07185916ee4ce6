import { scaled } from '../helpers/slowdown';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { openDatabase, schema } from '../../src/db';
import type { TestServer } from '../helpers/server';
import { api, DEMO_DEPLOYMENT, deploymentAtFirstDesktop, isAlive, killMachines, machinePids, signIn, startServerProcess, untilDeploymentMade, type ServerProcess } from '../helpers/process';
import { socketOf, until } from '../helpers/wait';

// The real server, as a crashing machine and an operator's stop would treat it: SIGKILL in the
// middle of a deployment's creation while desktops run, then SIGTERM with a live socket open.
// Each restart must adopt the running desktops and leave no file without a record (or the reverse).

// Short: QEMU's unix socket paths (run/<desktop id>/qmp.sock) must fit 107 bytes.
const dataDir = mkdtempSync(join(tmpdir(), 'vc-'));
const sockets: Socket[] = [];
let server: ServerProcess | undefined;

afterAll(async () => {
  for (const s of sockets) s.close();
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  killMachines(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}, scaled(240_000));

type Desktop = { id: string; name: string; state: string };
const DEPLOYMENT_USERS = DEMO_DEPLOYMENT.users;

const start = async () => (server = await startServerProcess(dataDir, { DISK_OPERATION_DELAY_MS: '300', START_CONCURRENCY: '2' }));
const live = (url: string, token: string) => socketOf({ url } as TestServer, token).then((s) => (sockets.push(s), s));
const desktopsOf = async (url: string, token: string) => (await api<Desktop[]>(url, token, '/user/desktops')).body;
const stateOf = async (url: string, token: string, id: string) => (await desktopsOf(url, token)).find((d) => d.id === id)?.state;

/** Files under the storage folder, and the storage rows (read from the database once the server is down). */
async function storageState() {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(resolve(p));
    }
  };
  walk(join(dataDir, 'storage'));
  const database = await openDatabase({ dir: join(dataDir, 'db') });
  try {
    const rows = await database.db.select().from(schema.storage);
    const media = await database.db.select().from(schema.media);
    const desktops = await database.db.select().from(schema.domains);
    return { files, rows, media, desktops };
  } finally {
    await database.close();
  }
}

let running: { id: string; token: string }[] = [];
let deploymentId = '';

describe('a server killed and stopped', () => {
  it('killed with SIGKILL mid-deployment: restarts with the same desktops running, the job ends, nothing orphaned', async () => {
    const first = await start();
    const admin = await signIn(first.url, 'admin');
    const uma = await signIn(first.url, 'user');
    // Two desktops running (the demo guest boots in a moment, also under TCG).
    const [adminDesk] = await desktopsOf(first.url, admin);
    const umaDesk = (await desktopsOf(first.url, uma)).find((d) => d.name === 'Demo desktop')!;
    running = [{ id: adminDesk!.id, token: admin }, { id: umaDesk.id, token: uma }];
    for (const d of running) expect((await api(first.url, d.token, `/desktop/start/${d.id}`)).status).toBe(200);
    for (const d of running) await until(`${d.id} started`, async () => (await stateOf(first.url, d.token, d.id)) === 'Started', 90_000);
    const pids = machinePids(dataDir);
    expect(pids).toHaveLength(2);

    // A deployment for eight users; the server is killed as soon as its first desktop exists.
    const { id, socket } = await deploymentAtFirstDesktop(first.url, admin, 'Crash lab');
    sockets.push(socket);
    deploymentId = id;
    first.child.kill('SIGKILL');
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });
    socket.close();

    // The machines outlived the server; the next one adopts them and finishes the deployment.
    for (const pid of pids) expect(isAlive(pid)).toBe(true);
    const second = await start();
    const admin2 = await signIn(second.url, 'admin');
    const uma2 = await signIn(second.url, 'user');
    expect(await stateOf(second.url, admin2, adminDesk!.id)).toBe('Started');
    expect(await stateOf(second.url, uma2, umaDesk.id)).toBe('Started');
    expect(machinePids(dataDir).sort()).toEqual([...pids].sort());
    await untilDeploymentMade(second.url, admin2, deploymentId, 90_000);

    // Stop it (gracefully) to read its database: one desktop per user, every record with its file and back.
    second.child.kill('SIGTERM');
    expect(await second.exited).toMatchObject({ code: 0 });
    const state = await storageState();
    const deployed = state.desktops.filter((d) => d.tag === deploymentId);
    expect(deployed).toHaveLength(DEPLOYMENT_USERS);
    expect(new Set(deployed.map((d) => d.userId)).size).toBe(DEPLOYMENT_USERS);
    expect(deployed.every((d) => d.status === 'Stopped')).toBe(true);
    const owned = new Set([...state.rows.map((r) => resolve(r.path)), ...state.media.flatMap((m) => (m.path ? [resolve(m.path)] : []))]);
    expect(state.files.filter((f) => !owned.has(f)), 'files without a record').toEqual([]);
    expect(state.rows.filter((r) => r.status !== 'deleted' && !state.files.includes(resolve(r.path))), 'records without a file').toEqual([]);
    expect(state.rows.filter((r) => r.status !== 'ready'), 'disks not ready').toEqual([]);
    // Nothing had to be put aside either: the crash left no disk that no record planned.
    expect(() => readdirSync(join(dataDir, 'quarantine'))).toThrow();
  }, scaled(240_000));

  it('stopped with SIGTERM while a desktop runs and a socket is open: ends within 10 s, the desktop is adopted', async () => {
    const third = await start();
    const admin = await signIn(third.url, 'admin');
    const [desk] = running;
    expect(await stateOf(third.url, admin, desk!.id)).toBe('Started');
    const socket = await live(third.url, admin);
    const disconnected = new Promise<string>((resolve) => socket.on('disconnect', (reason: string) => resolve(reason)));
    // A keep-alive connection with a request behind it, too.
    expect((await api(third.url, admin, '/user/desktops')).status).toBe(200);

    const asked = Date.now();
    third.child.kill('SIGTERM');
    const ended = await third.exited;
    const took = Date.now() - asked;
    expect(ended).toEqual({ code: 0, signal: null });
    expect(took).toBeLessThan(scaled(10_000)); // 10 s on a quiet machine
    expect(third.output()).toContain('SIGTERM: stopping');
    expect(['io server disconnect', 'transport close']).toContain(await disconnected);
    for (const pid of machinePids(dataDir)) expect(isAlive(pid)).toBe(true);

    const fourth = await start();
    const admin4 = await signIn(fourth.url, 'admin');
    const uma4 = await signIn(fourth.url, 'user');
    expect(await stateOf(fourth.url, admin4, running[0]!.id)).toBe('Started');
    expect(await stateOf(fourth.url, uma4, running[1]!.id)).toBe('Started');
    // Done: the machines are stopped for good (the afterAll also kills what is left).
    for (const d of running) {
      const token = d.id === running[0]!.id ? admin4 : uma4;
      await api(fourth.url, token, `/desktop/stop/${d.id}`);
      await api(fourth.url, token, `/desktop/stop/${d.id}`);
    }
    await until('machines stopped', async () => machinePids(dataDir).every((pid) => !isAlive(pid)), 60_000);
    fourth.child.kill('SIGTERM');
    expect((await fourth.exited).code).toBe(0);
  }, scaled(240_000));
});

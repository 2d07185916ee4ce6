// Two real server processes on one PostgreSQL: the one running a deployment's creation is killed with
// SIGKILL in the middle of it, the other takes the job over (pg-boss, server/src/jobs/queue.ts) and
// finishes it: one desktop per user, no duplicate, none missing, the job at 100 %, no file left behind;
// then it stops with SIGTERM (exit 0).
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { openDatabase, schema, type Database } from '../../src/db';
import { createScratchDatabase } from '../helpers/db';
import { api, deploymentAtFirstDesktop, DEMO_DEPLOYMENT, killMachines, signIn, startServerProcess, untilDeploymentMade, type ServerProcess } from '../helpers/process';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

// Short: QEMU's unix socket paths must fit 107 bytes.
const dirs = [mkdtempSync(join(tmpdir(), 'vqa-')), mkdtempSync(join(tmpdir(), 'vqb-'))];
const servers: ServerProcess[] = [];
const sockets: Socket[] = [];
let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let database: Database;

const DEPLOYMENT_USERS = DEMO_DEPLOYMENT.users;

const start = async (dataDir: string) => {
  const server = await startServerProcess(dataDir, {
    DATABASE_URL: scratch.url,
    DISK_OPERATION_DELAY_MS: '300',
    GUEST_NETWORK: 'off',
    RDP_GATEWAY_PORT: '0',
    VPN_PORT: 'off',
  });
  servers.push(server);
  return server;
};

beforeAll(async () => {
  scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL!, 'vdi_test_takeover');
  database = await openDatabase({ url: scratch.url });
}, scaled(60_000));

afterAll(async () => {
  for (const s of sockets) s.close();
  for (const server of servers) {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  }
  for (const dir of dirs) {
    killMachines(dir);
    rmSync(dir, { recursive: true, force: true });
  }
  await database?.close();
  await scratch?.drop();
}, scaled(120_000));

describe('a deployment creation taken over after kill -9', () => {
  it('another server process finishes it: one desktop per user, progress 100 %, no file left behind', async () => {
    // B first: it seeds the empty database; A joins it.
    const b = await start(dirs[1]!);
    const a = await start(dirs[0]!);
    const admin = await signIn(a.url, 'admin');
    const { id, socket } = await deploymentAtFirstDesktop(a.url, admin, 'Takeover lab');
    sockets.push(socket);
    a.child.kill('SIGKILL');
    expect(await a.exited).toMatchObject({ signal: 'SIGKILL' });

    const adminOnB = await signIn(b.url, 'admin');
    await untilDeploymentMade(b.url, adminOnB, id, 120_000);
    // (the job's row is marked done just after its last desktop is made: read once it has ended)
    const jobOf = async () => (await database.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id)))[0];
    await until('the deployment job to end', async () => (await jobOf())?.status !== 'running', 30_000);
    expect(await jobOf()).toMatchObject({ status: 'done', progress: 100 });
    const desktops = await database.db.select().from(schema.domains).where(eq(schema.domains.tag, id));
    expect(desktops).toHaveLength(DEPLOYMENT_USERS);
    expect(new Set(desktops.map((d) => d.userId)).size).toBe(DEPLOYMENT_USERS);
    expect(desktops.every((d) => d.status === 'Stopped')).toBe(true);
    // Every disk record has its file; A's half-made files went with their records.
    const rows = await database.db.select().from(schema.storage);
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(resolve(p));
      }
    };
    for (const dir of dirs) walk(join(dir, 'storage'));
    const owned = new Set(rows.map((r) => resolve(r.path)));
    expect(files.filter((f) => !owned.has(f)), 'files without a record').toEqual([]);
    expect(rows.filter((r) => r.status !== 'deleted' && !files.includes(resolve(r.path))), 'records without a file').toEqual([]);
    // A stop on PostgreSQL leaves the work queue cleanly too.
    b.child.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  }, scaled(300_000));
});

// The authorisation matrix and the bad-input sweeps once more, through HAProxy in front of three real
// server processes on one PostgreSQL (issue 26): the same cases and checks as
// server/test/api/authorization-matrix.test.ts and bad-input.test.ts (helpers/authorization-matrix.ts,
// helpers/bad-input.ts), so an object made through one process is used through another and nothing
// rests on one process's memory. The fixtures write to the installation's database and disks through a
// connection and a disk store of this test's own (no server runs in this process); the route list
// (with its schemas) is that of an in-process app on its own PGlite database, never sent a request.
import { afterAll, beforeAll, expect } from 'vitest';
import { openDatabase, type Database } from '../../src/db';
import { createLocalEngine, type Engine } from '../../src/engine';
import type { RegisteredRoute } from '../../src/app';
import { describeIf, firstMissing, itIf, missingPrograms } from '../helpers/can-run';
import { startProcesses, type ProcessCluster } from '../helpers/processes';
import { signIn } from '../helpers/process';
import { endEngine, startTestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { checkAuthFirst, checkBadInput } from '../helpers/bad-input';
import { CALLERS, casesRun, LIST_CALLERS, listLeaks, MATRIX, MATRIX_ENV, matrixOrder, prepareMatrix, runCase, serversSeen } from '../helpers/authorization-matrix';

const adminUrl = process.env.TEST_DATABASE_URL;
const missing = firstMissing(adminUrl ? undefined : 'needs TEST_DATABASE_URL', missingPrograms('haproxy'));
const describe = describeIf(missing);
const it = itIf(missing);

let cluster: ProcessCluster;
beforeAll(async () => {
  if (missing) return;
  cluster = await startProcesses({
    adminUrl: adminUrl!, n: 3, firstPort: 19750, prefix: 'i26matrix',
    // As the in-process suites' server: sessions that outlast the run on a slow machine.
    env: { ...MATRIX_ENV, SESSION_TOKEN_SECONDS: String(scaled(300)) },
  });
}, scaled(120_000));
afterAll(async () => {
  await cluster?.close();
}, scaled(30_000));

describe('bad input through the balancer', () => {
  let routes: RegisteredRoute[];
  let admin: string;
  beforeAll(async () => {
    // The routes as this code registers them (with their schemas).
    const catalogue = await startTestServer();
    routes = catalogue.app.registeredRoutes;
    await catalogue.close();
    admin = await signIn(cluster.url, 'admin');
  }, scaled(60_000));

  it('answers no 5xx and a description_code on every 4xx, signed in as admin and anonymously', async () => {
    await checkBadInput(cluster.url, routes, admin);
  }, scaled(120_000));

  it('authenticates before it reads the input on every route but the public ones', async () => {
    await checkAuthFirst(cluster.url, routes);
  }, scaled(60_000));
});

describe('the authorisation matrix through the balancer', () => {
  let database: Database;
  let engine: Engine;
  beforeAll(async () => {
    database = await openDatabase({ url: cluster.databaseUrl });
    engine = await createLocalEngine({ dataDir: cluster.dataDir, accel: 'auto', localHypervisor: false });
    await prepareMatrix({ url: cluster.url, ctx: { db: database.db, engine } });
  }, scaled(240_000));
  afterAll(async () => {
    if (engine) await endEngine(engine);
    await database?.close();
  });

  it('lists never show another category’s objects', async () => {
    const leaks = await Promise.all(LIST_CALLERS.map(async (caller) => (await listLeaks(caller)).map((l) => `${caller}: ${l}`)));
    expect(leaks.flat().join('\n')).toBe('');
  }, scaled(60_000));

  for (const key of matrixOrder()) it(key, async () => runCase(key), scaled(60_000));

  it('counted its cases, answered by every process', () => {
    expect(casesRun()).toBeGreaterThanOrEqual(Object.keys(MATRIX).length * CALLERS.length);
    expect([...serversSeen()].sort()).toEqual(cluster.ids);
    console.log(`authorisation matrix through the balancer: ${Object.keys(MATRIX).length} routes, ${casesRun()} route×caller cases`);
  });
});

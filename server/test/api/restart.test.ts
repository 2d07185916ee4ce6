import { scaled } from '../helpers/slowdown';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../../src/config';
import { buildApp, createContext } from '../../src/app';
import { schema } from '../../src/db';
import { createLocalEngine, type Engine } from '../../src/engine';
import { ensureDemoGuest } from '../../src/engine/guest-image';
import { seed } from '../../src/seed/seed';
import { seedDemoDesktops } from '../../src/seed/demo-desktops';
import { openTestDatabase } from '../helpers/db';
import { DEMO_PASSWORD, endEngine, testImagesDir } from '../helpers/server';

const dataDir = mkdtempSync(join(tmpdir(), 'vr-'));
const engines: Engine[] = [];
afterAll(async () => {
  for (const e of engines) await endEngine(e);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('server restart', () => {
  it('adopts machines that kept running and corrects the state of those that died meanwhile', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO_PASSWORD, WEB_DIST: join(dataDir, 'none') });
    const database = await openTestDatabase();
    await seed(database.db, { demo: true, demoPassword: DEMO_PASSWORD });
    const engine1 = await createLocalEngine({ dataDir, accel: 'auto' });
    engines.push(engine1);
    await seedDemoDesktops(database.db, engine1, await ensureDemoGuest(testImagesDir()));
    const app1 = await buildApp(createContext(config, database, engine1));

    const tokenOf = async (app: typeof app1, username: string) =>
      (await app.inject({ method: 'POST', url: '/authentication/login?provider=form&category_id=default', payload: `username=${username}&password=${DEMO_PASSWORD}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })).body;
    const desktopOf = async (username: string) => {
      const [u] = await database.db.select().from(schema.users).where(eq(schema.users.username, username));
      return (await database.db.select().from(schema.domains).where(eq(schema.domains.userId, u!.id))).find((d) => d.kind === 'desktop')!;
    };
    const stateOf = async (id: string) => (await database.db.select().from(schema.domains).where(eq(schema.domains.id, id)))[0]!.status;
    const waitFor = async (id: string, state: string) => {
      const until = Date.now() + scaled(20_000);
      while ((await stateOf(id)) !== state) {
        if (Date.now() > until) throw new Error(`${id} stayed ${await stateOf(id)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };

    const [a, b] = [await desktopOf('admin'), await desktopOf('manager')];
    const [adminToken, managerToken] = [await tokenOf(app1, 'admin'), await tokenOf(app1, 'manager')];
    for (const [d, t] of [[a, adminToken], [b, managerToken]] as const) {
      const r = await app1.inject({ method: 'GET', url: `/api/v3/desktop/start/${d.id}`, headers: { authorization: `Bearer ${t}` } });
      expect(r.statusCode).toBe(200);
    }
    await waitFor(a.id, 'Started');
    await waitFor(b.id, 'Started');

    // Usage as a server older than its records left it: no interval open for the running desktop.
    await database.db.delete(schema.usageIntervals).where(eq(schema.usageIntervals.desktopId, a.id));
    const intervalsOf = (id: string) => database.db.select().from(schema.usageIntervals).where(eq(schema.usageIntervals.desktopId, id));

    // The server goes away; the machines do not. One of them dies while nobody watches.
    await app1.close();
    const pidOfB = (await engine1.driver.list()).find((m) => m.id === b.id)!.pid!;
    await engine1.driver.close();
    process.kill(pidOfB, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 500));

    const restartedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const engine2 = await createLocalEngine({ dataDir, accel: 'auto' });
    engines.push(engine2);
    const app2 = await buildApp(createContext(config, database, engine2));
    expect(await stateOf(a.id)).toBe('Started');
    expect(await stateOf(b.id)).toBe('Stopped');
    expect((await engine2.driver.list()).map((m) => m.id)).toEqual([a.id]);
    // The adopted desktop's usage counts from the restart; the one that died has its interval closed.
    const [adopted, ...more] = await intervalsOf(a.id);
    expect(more).toEqual([]);
    expect(adopted).toMatchObject({ endedAt: null });
    expect(adopted!.startedAt.getTime()).toBeGreaterThanOrEqual(restartedAt.getTime());
    expect((await intervalsOf(b.id)).every((i) => i.endedAt !== null)).toBe(true);

    // Restarted again: the machine adopted again, its interval goes on (never a second one).
    await app2.close();
    await engine2.driver.close();
    const engine3 = await createLocalEngine({ dataDir, accel: 'auto' });
    engines.push(engine3);
    const app3 = await buildApp(createContext(config, database, engine3));
    expect(await stateOf(a.id)).toBe('Started');
    expect(await intervalsOf(a.id)).toEqual([adopted]);

    // The adopted machine obeys the new process.
    const t2 = await tokenOf(app3, 'admin');
    for (let i = 0; i < 2; i++) await app3.inject({ method: 'GET', url: `/api/v3/desktop/stop/${a.id}`, headers: { authorization: `Bearer ${t2}` } });
    await waitFor(a.id, 'Stopped');
    // The stop's record (which closes the interval) follows the state's write: waited for, not raced.
    const until = Date.now() + scaled(10_000);
    while ((await intervalsOf(a.id))[0]?.endedAt === null && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect((await intervalsOf(a.id)).map((i) => i.id)).toEqual([adopted!.id]);
    expect((await intervalsOf(a.id))[0]!.endedAt).toBeInstanceOf(Date);
    await app3.close();
    await database.close();
  }, scaled(120_000));
});

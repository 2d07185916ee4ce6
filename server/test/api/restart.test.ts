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

    // The server goes away; the machines do not. One of them dies while nobody watches.
    await app1.close();
    const pidOfB = (await engine1.driver.list()).find((m) => m.id === b.id)!.pid!;
    await engine1.driver.close();
    process.kill(pidOfB, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 500));

    const engine2 = await createLocalEngine({ dataDir, accel: 'auto' });
    engines.push(engine2);
    const app2 = await buildApp(createContext(config, database, engine2));
    expect(await stateOf(a.id)).toBe('Started');
    expect(await stateOf(b.id)).toBe('Stopped');
    expect((await engine2.driver.list()).map((m) => m.id)).toEqual([a.id]);

    // The adopted machine obeys the new process.
    const t2 = await tokenOf(app2, 'admin');
    for (let i = 0; i < 2; i++) await app2.inject({ method: 'GET', url: `/api/v3/desktop/stop/${a.id}`, headers: { authorization: `Bearer ${t2}` } });
    await waitFor(a.id, 'Stopped');
    await app2.close();
    await database.close();
  }, scaled(120_000));
});

import { scaled } from '../helpers/slowdown';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { formatBookingDate } from '@vdi/contracts';
import { loadConfig } from '../../src/config';
import { buildApp, createContext } from '../../src/app';
import { schema } from '../../src/db';
import { createLocalEngine } from '../../src/engine';
import { ensureDemoGuest } from '../../src/engine/guest-image';
import { manualClock } from '../../src/scheduler/clock';
import { seed } from '../../src/seed/seed';
import { seedDemoDesktops } from '../../src/seed/demo-desktops';
import { openTestDatabase } from '../helpers/db';
import { DEMO_PASSWORD, endEngine, testImagesDir } from '../helpers/server';
import { until } from '../helpers/wait';

// The scheduler's jobs live in the database: a booking made before a restart gets its desktop at
// its start even when the start passed while the server was down, and ends on time after it.

const MIN = 60_000;
const dataDir = mkdtempSync(join(tmpdir(), 'vb-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

type Setup = {
  config: ReturnType<typeof loadConfig>;
  database: Awaited<ReturnType<typeof openTestDatabase>>;
  engine: Awaited<ReturnType<typeof createLocalEngine>>;
  gpuId: string;
};
let setup: Setup | undefined;

// The heavy part (database, demo organisation, demo disks) is set up once, with a bound fit for a
// loaded machine; the test itself waits on conditions (the scheduler idle, the rows), never on time.
beforeAll(async () => {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO_PASSWORD, WEB_DIST: join(dataDir, 'none') });
  const database = await openTestDatabase();
  await seed(database.db, { demo: true, demoPassword: DEMO_PASSWORD });
  const engine = await createLocalEngine({ dataDir, accel: 'auto' });
  setup = { config, database, engine, gpuId: '' };
  await seedDemoDesktops(database.db, engine, await ensureDemoGuest(testImagesDir()));
  const [uma] = await database.db.select().from(schema.users).where(eq(schema.users.username, 'user'));
  const [gpu] = await database.db.select().from(schema.domains).where(and(eq(schema.domains.userId, uma!.id), eq(schema.domains.name, 'GPU desktop')));
  setup.gpuId = gpu!.id;
}, scaled(240_000));

afterAll(async () => {
  // The booking started the GPU desktop: its machine goes too (it would outlive the engine).
  if (setup) await endEngine(setup.engine);
  await setup?.database.close();
}, scaled(240_000));

describe('bookings across a restart', () => {
  it('runs the start that fell due while the server was down, then the end when due', async () => {
    const { config, database, engine, gpuId } = setup!;
    const clock = manualClock(new Date());
    const bookingId = async () => (await database.db.select().from(schema.domains).where(eq(schema.domains.id, gpuId)))[0]!.bookingId;

    const app1 = await buildApp(createContext(config, database, engine, { clock }));
    const login = await app1.inject({
      method: 'POST', url: '/authentication/login?provider=form&category_id=default', payload: `username=user&password=${DEMO_PASSWORD}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(login.statusCode).toBe(200);
    const start = new Date(Math.ceil(clock.now().getTime() / (60 * MIN)) * 60 * MIN + 60 * MIN);
    const res = await app1.inject({
      method: 'POST', url: '/api/v3/booking/event', headers: { authorization: `Bearer ${login.body}` },
      payload: { element_id: gpuId, element_type: 'desktop', start: formatBookingDate(start), end: formatBookingDate(new Date(start.getTime() + 30 * MIN)) },
    });
    expect(res.statusCode).toBe(200);
    const booking = res.json();
    await app1.close();

    // Down over the start.
    clock.set(new Date(start.getTime() + 5 * MIN));
    expect(await bookingId()).toBeNull();

    const app2 = await buildApp(createContext(config, database, engine, { clock }));
    try {
      await app2.bookings.scheduler.idle();
      await until('the overdue booking start to run', async () => (await bookingId()) === booking.id, 60_000);
      const kinds = (await app2.bookings.scheduler.pending(`booking:${booking.id}`)).map((j) => j.kind);
      expect(kinds).toEqual(['booking.warn', 'booking.warn', 'booking.end']);
      clock.set(new Date(start.getTime() + 30 * MIN));
      await app2.bookings.scheduler.idle();
      await until('the booking end to run', async () => (await bookingId()) === null, 60_000);
      expect(await app2.bookings.scheduler.pending(`booking:${booking.id}`)).toEqual([]);
    } finally {
      await app2.close();
    }
  }, scaled(120_000));
});

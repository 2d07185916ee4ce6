import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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
import { DEMO_PASSWORD, testImagesDir } from '../helpers/server';

// The scheduler's jobs live in the database: a booking made before a restart gets its desktop at
// its start even when the start passed while the server was down, and ends on time after it.

const MIN = 60_000;
const dataDir = mkdtempSync(join(tmpdir(), 'vb-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('bookings across a restart', () => {
  it('runs the start that fell due while the server was down, then the end when due', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO_PASSWORD, WEB_DIST: join(dataDir, 'none') });
    const database = await openTestDatabase();
    const clock = manualClock(new Date());
    await seed(database.db, { demo: true, demoPassword: DEMO_PASSWORD });
    const engine = await createLocalEngine({ dataDir, accel: 'auto' });
    try {
      await seedDemoDesktops(database.db, engine, await ensureDemoGuest(testImagesDir()));
      const [uma] = await database.db.select().from(schema.users).where(eq(schema.users.username, 'user'));
      const [gpu] = await database.db.select().from(schema.domains).where(and(eq(schema.domains.userId, uma!.id), eq(schema.domains.name, 'GPU desktop')));
      const bookingId = async () => (await database.db.select().from(schema.domains).where(eq(schema.domains.id, gpu!.id)))[0]!.bookingId;

      const app1 = await buildApp(createContext(config, database, engine, { clock }));
      const login = await app1.inject({
        method: 'POST', url: '/authentication/login?provider=form&category_id=default', payload: `username=user&password=${DEMO_PASSWORD}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      const start = new Date(Math.ceil(clock.now().getTime() / (60 * MIN)) * 60 * MIN + 60 * MIN);
      const res = await app1.inject({
        method: 'POST', url: '/api/v3/booking/event', headers: { authorization: `Bearer ${login.body}` },
        payload: { element_id: gpu!.id, element_type: 'desktop', start: formatBookingDate(start), end: formatBookingDate(new Date(start.getTime() + 30 * MIN)) },
      });
      expect(res.statusCode).toBe(200);
      const booking = res.json();
      await app1.close();

      // Down over the start.
      clock.set(new Date(start.getTime() + 5 * MIN));
      expect(await bookingId()).toBeNull();

      const app2 = await buildApp(createContext(config, database, engine, { clock }));
      await app2.bookings.scheduler.idle();
      expect(await bookingId()).toBe(booking.id);
      const kinds = (await app2.bookings.scheduler.pending(`booking:${booking.id}`)).map((j) => j.kind);
      expect(kinds).toEqual(['booking.warn', 'booking.warn', 'booking.end']);
      clock.set(new Date(start.getTime() + 30 * MIN));
      await app2.bookings.scheduler.idle();
      expect(await bookingId()).toBeNull();
      expect(await app2.bookings.scheduler.pending(`booking:${booking.id}`)).toEqual([]);
      await app2.close();
    } finally {
      await engine.driver.close();
      await database.close();
    }
  });
});

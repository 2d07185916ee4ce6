import { scaled } from '../helpers/slowdown';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { count, eq, sql } from 'drizzle-orm';
import { openDatabase, POSTGRES_POOL_SIZE, schema, type Database } from '../../src/db';
import { DataDirLockedError } from '../../src/db/lock';
import { seed } from '../../src/seed/seed';
import { verifyPassword } from '../../src/auth/passwords';
import { createSettings } from '../../src/settings';
import { createThrottle, LOGIN_THROTTLE } from '../../src/auth/throttle';
import { openTestDatabase } from '../helpers/db';
import { until } from '../helpers/wait';

let database: Database & { label: string; url?: string };
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => database?.close());

describe(`database (${process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'})`, () => {
  it('applies the migrations and seeds the demo organisation once', async () => {
    const first = await seed(database.db, { demo: true, demoPassword: 'first-pass' });
    expect(first.created).toBe(true);
    expect(first.accounts.map((a) => a.username)).toEqual(expect.arrayContaining(['admin', 'manager', 'advanced', 'user']));
    expect(first.registrationCode).toMatch(/^join-[0-9a-f]{12}$/);
    const [{ n }] = await database.db.select({ n: count() }).from(schema.users);
    const second = await seed(database.db, { demo: true });
    expect(second.created).toBe(false);
    const [{ n: after }] = await database.db.select({ n: count() }).from(schema.users);
    expect(after).toBe(n);
    const roles = await database.db.select().from(schema.roles);
    expect(roles.map((r) => r.id).sort()).toEqual(['admin', 'advanced', 'manager', 'user']);
  });

  it('runs the start-up steps of several processes one at a time (PostgreSQL: an advisory lock; PGlite: one process, as is)', async () => {
    let inside = 0;
    let most = 0;
    const step = async () => {
      most = Math.max(most, ++inside);
      await new Promise((r) => setTimeout(r, 50));
      inside--;
      return 'done';
    };
    if (!database.url) return expect(await database.exclusive(step)).toBe('done');
    // Another process's pool on the same database.
    const other = await openDatabase({ url: database.url });
    try {
      expect(await Promise.all([database.exclusive(step), other.exclusive(step), database.exclusive(step), other.exclusive(step)])).toEqual(['done', 'done', 'done', 'done']);
    } finally {
      await other.close();
    }
    expect(most).toBe(1);
  });

  it('holds at most DATABASE_POOL_SIZE connections to PostgreSQL, POSTGRES_POOL_SIZE without it', async () => {
    if (!database.url) return; // (the embedded database's connections are its own: EMBEDDED_POOL_SIZE)
    const sized = await openDatabase({ url: database.url, poolSize: 3 });
    const plain = await openDatabase({ url: database.url });
    try {
      await Promise.all(Array.from({ length: 8 }, () => sized.db.execute(sql`select pg_sleep(0.05)`)));
      expect(sized.pool()).toMatchObject({ max: 3 });
      expect(sized.pool().total).toBeLessThanOrEqual(3);
      expect(plain.pool().max).toBe(POSTGRES_POOL_SIZE);
    } finally {
      await sized.close();
      await plain.close();
    }
  });

  it('applies DEMO_PASSWORD to the demo accounts on a later start', async () => {
    await seed(database.db, { demo: true, demoPassword: 'changed-pass' });
    const [admin] = await database.db.select().from(schema.users).where(eq(schema.users.username, 'admin'));
    expect(await verifyPassword(admin!.passwordHash, 'changed-pass')).toBe(true);
    const [student] = await database.db.select().from(schema.users).where(eq(schema.users.username, 'student01'));
    expect(await verifyPassword(student!.passwordHash, 'first-pass')).toBe(true);
  });

  it('generates distinct random passwords without DEMO_PASSWORD', async () => {
    const fresh = await openTestDatabase();
    try {
      const result = await seed(fresh.db, { demo: true });
      const passwords = result.accounts.map((a) => a.password);
      expect(new Set(passwords).size).toBe(passwords.length);
      expect(passwords.every((p) => p && p.length >= 16)).toBe(true);
    } finally {
      await fresh.close();
    }
  });

  it('stores settings as JSON with defaults', async () => {
    const settings = createSettings(database.db);
    expect(await settings.get('maintenance')).toEqual({ enabled: false, title: '', body: '' });
    await settings.set('maintenance', { enabled: true, title: 't', body: 'b' });
    expect((await settings.get('maintenance')).enabled).toBe(true);
    expect((await settings.get('recycle_bin')).cutoff_hours).toBe(1);
  });

  it('counts failures and blocks with doubling times', async () => {
    const throttle = createThrottle(database.db, LOGIN_THROTTLE);
    const now = new Date('2026-01-01T10:00:00Z');
    const after = (ms: number) => new Date(now.getTime() + ms);
    for (let i = 0; i < 9; i++) expect((await throttle.count('k', now)).refused).toBeNull();
    await throttle.check('k', now);
    // The tenth is counted and blocks for a minute.
    expect(await throttle.count('k', now)).toEqual({ refused: null, before: 9 });
    await expect(throttle.check('k', after(30_000))).rejects.toMatchObject({ status: 429 });
    expect((await throttle.count('k', after(30_000))).refused).toEqual(after(60_000));
    await throttle.check('k', after(61_000));
    expect((await throttle.count('k', after(61_000))).refused).toBeNull();
    await expect(throttle.check('k', after(61_000 + 119_000))).rejects.toMatchObject({ status: 429 });
    await throttle.check('k', after(61_000 + 121_000));
    await throttle.reset('k');
    expect(await throttle.count('k', now)).toEqual({ refused: null, before: 0 });
  });

  it('counts parallel requests one at a time: none is lost, none passes a block', async () => {
    const throttle = createThrottle(database.db, LOGIN_THROTTLE);
    const now = new Date('2026-01-01T10:00:00Z');
    const results = await Promise.all(Array.from({ length: 25 }, () => throttle.count('parallel', now)));
    const passed = results.filter((r) => r.refused === null);
    expect(passed.map((r) => r.before).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results.filter((r) => r.refused !== null).length).toBe(15);
  });

  it('keeps the event loop free while a query runs', async () => {
    let ticked = false;
    setTimeout(() => (ticked = true), 0);
    // Long enough that the timer, if the loop is free, fires before the answer arrives.
    const [row] = await database.db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(sql`generate_series(1, 2000000)`);
    expect(row!.n).toBe(2_000_000);
    expect(ticked).toBe(true);
  });

  it('runs concurrent transactions and parameterised queries in isolation', async () => {
    await database.db.insert(schema.config).values({ key: 'counter', value: { n: 0 } });
    const bump = () =>
      database.db.transaction(async (tx) => {
        const [row] = await tx.select().from(schema.config).where(eq(schema.config.key, 'counter')).for('update');
        await tx
          .update(schema.config)
          .set({ value: { n: (row!.value as { n: number }).n + 1 } })
          .where(eq(schema.config.key, 'counter'));
      });
    const read = async (i: number) => {
      const [row] = await database.db.select({ v: sql<number>`${i}::int` }).from(schema.roles).limit(1);
      return row!.v === i;
    };
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? bump().then(() => true) : read(i))));
    expect(results.every(Boolean)).toBe(true);
    const [counter] = await database.db.select().from(schema.config).where(eq(schema.config.key, 'counter'));
    expect(counter!.value).toEqual({ n: 20 });
  });
});

// The embedded database's own files: part of the PGlite pass; the PostgreSQL pass of this suite
// (TEST_DATABASE_URL) has no data directory, so these are not part of it (not skipped there).
if (!process.env.TEST_DATABASE_URL) describe('embedded data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vdi-lock-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps data across reopening and refuses a second opener while in use', async () => {
    const first = await openDatabase({ dir: join(dir, 'db') });
    await seed(first.db, { demo: false, demoPassword: 'x-pass-123' });
    await expect(openDatabase({ dir: join(dir, 'db') })).rejects.toBeInstanceOf(DataDirLockedError);
    await first.close();
    const again = await openDatabase({ dir: join(dir, 'db') });
    const users = await again.db.select().from(schema.users);
    expect(users.map((u) => u.username)).toEqual(['admin']);
    await again.close();
  }, scaled(180_000));

  it('keeps every committed write when the server process is killed (kill -9), and opens again', async () => {
    const dbDir = join(dir, 'killed', 'db');
    const holder = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../helpers/db-holder.ts', import.meta.url)), dbDir], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines: string[] = [];
    createInterface({ input: holder.stdout! }).on('line', (l) => lines.push(l));
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    try {
      await until('the holder to open the database', async () => lines.includes('open'), 120_000);
      for (const key of ['one', 'two', 'three']) holder.stdin!.write(`write ${key}\n`);
      await until('three committed writes', async () => lines.filter((l) => l.startsWith('committed')).length === 3, 60_000);
      expect(readFileSync(join(dir, 'killed', 'db.lock'), 'utf8')).toBe(String(holder.pid));
    } finally {
      holder.kill('SIGKILL');
      await exited;
    }
    // The lock names a process that is gone: the next opener takes it over.
    expect(existsSync(join(dir, 'killed', 'db.lock'))).toBe(true);
    const again = await openDatabase({ dir: dbDir });
    try {
      const rows = await again.db.select({ key: schema.config.key }).from(schema.config);
      expect(rows.map((r) => r.key).sort()).toEqual(['one', 'three', 'two']);
    } finally {
      await again.close();
    }
    expect(existsSync(join(dir, 'killed', 'db.lock'))).toBe(false);
  }, scaled(300_000));
});

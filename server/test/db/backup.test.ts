// Backup and restore (issue 29): `npm run backup` asks a running portal (the real server process, its
// embedded database locked by it — or on PostgreSQL with TEST_DATABASE_URL) to make a backup with an admin's
// API token and downloads it; `npm run restore` puts it onto a fresh DATA_DIR (and an empty database);
// a server started on it finds the users, the desktop with its disk (it starts), the booking and the audit
// log as they were. Refused, with nothing written: a truncated archive, a foreign one, one of a newer
// schema, a target that is not empty. A restore that fails while loading the rows leaves no database made
// and no DATA_DIR. A disk that fills while backing up leaves no archive, with a clear message. The command
// gives up with a clear message when the portal stops answering. Old backups are pruned (BACKUP_KEEP).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db';
import { makeBackup, poolOf, pruneBackups } from '../../src/backup/archive';
import { bookingDate } from '../helpers/routes-fixtures';
import { createScratchDatabase } from '../helpers/db';
import { api, killMachines, signIn, startServerProcess, type ServerProcess } from '../helpers/process';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const adminUrl = process.env.TEST_DATABASE_URL;
const mode = adminUrl ? 'postgres' : 'pglite';
const root = join(import.meta.dirname, '..', '..', '..');
const work = mkdtempSync(join(tmpdir(), 'vdi-backup-'));
const cleanups: (() => Promise<unknown> | unknown)[] = [];
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const s of servers) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
  for (const c of cleanups.reverse()) await c();
  rmSync(work, { recursive: true, force: true });
}, scaled(60_000));

/** A scratch PostgreSQL database (postgres mode) or none (the embedded one under DATA_DIR). */
async function freshDatabase(prefix: string): Promise<Record<string, string>> {
  if (!adminUrl) return {};
  const scratch = await createScratchDatabase(adminUrl, prefix);
  cleanups.push(() => scratch.drop());
  return { DATABASE_URL: scratch.url };
}

/** The backup/restore command (server/src/backup/cli.ts) as `npm run backup|restore` runs it. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server', 'src', 'backup', 'cli.ts'), ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

async function stop(server: ServerProcess, dataDir: string) {
  server.child.kill('SIGTERM');
  await server.exited;
  killMachines(dataDir);
}

/** The servers here need no guest network, VPN or RD Gateway (the desktop's screen is VNC): none is left behind. */
const NO_PIECES = { GUEST_NETWORK: 'off', RDP_GATEWAY_PORT: 'off', VPN_PORT: 'off' };

const filesIn = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

type Seen = { users: string[]; desktop: { id: string; name: string }; booking: string; audit: number[] };

describe(`backup and restore (${mode})`, () => {
  const sourceDir = join(work, 'source');
  const archive = join(work, 'portal.tar.gz');
  let sourceDb: Record<string, string>;
  let seen: Seen;

  beforeAll(async () => {
    sourceDb = await freshDatabase('vdi_backup_src');
  });

  it('backs up a running portal through its API and restores it onto a fresh machine, where everything is as it was', async () => {
    // An older backup already kept on the server: BACKUP_KEEP=1 deletes it once the new one is whole.
    const old = 'backup-2020-01-01T00-00-00-000Z.tar.gz';
    mkdirSync(join(sourceDir, 'backups'), { recursive: true });
    writeFileSync(join(sourceDir, 'backups', old), 'an old backup');
    const source = await startServerProcess(sourceDir, { ...NO_PIECES, ...sourceDb, BACKUP_KEEP: '1' });
    servers.push(source);
    const admin = await signIn(source.url, 'admin');
    const uma = await signIn(source.url, 'user');
    // Real data: a new user, a booking of Uma's GPU desktop, audit entries (sign-ins, the user's creation, the token).
    const made = await api<{ id: string }>(source.url, admin, '/admin/users', {
      body: { username: 'restored.person', name: 'Restored Person', email: 'restored@example.org', password: 'Restored-pass-123', role: 'user', group: 'default-default', category: 'default' },
    });
    expect(made.status, JSON.stringify(made.body)).toBeLessThan(300);
    const desktops = await api<{ id: string; name: string }[]>(source.url, uma, '/user/desktops');
    const gpu = desktops.body.find((d) => d.name === 'GPU desktop')!;
    const demo = desktops.body.find((d) => d.name === 'Demo desktop')!;
    const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 26 * 3_600_000);
    const booked = await api<{ id: string }>(source.url, uma, '/booking/event', {
      body: { element_id: gpu.id, element_type: 'desktop', title: 'Kept by the backup', start: bookingDate(start), end: bookingDate(new Date(start.getTime() + 30 * 60_000)) },
    });
    expect(booked.status, JSON.stringify(booked.body)).toBe(200);
    const token = await api<{ token: string }>(source.url, admin, '/user/api-tokens', { body: { name: 'backups', scope: 'full', expires: null } });
    expect(token.status).toBe(200);
    const users = await api<{ items: { username: string }[] }>(source.url, admin, '/admin/users?per_page=100');
    const audit = await api<{ items: { id: number }[] }>(source.url, admin, '/admin/audit?per_page=100');
    seen = {
      users: users.body.items.map((u) => u.username).sort(),
      desktop: { id: demo.id, name: demo.name },
      booking: booked.body.id,
      audit: audit.body.items.map((e) => e.id).sort((a, b) => a - b),
    };
    expect(seen.users).toContain('restored.person');
    expect(seen.audit.length).toBeGreaterThan(3);

    // The command, with the token from the environment; the disks too (the desktop must start on the restored machine).
    const backup = await cli(['backup', '--out', archive, '--disks'], { PORTAL_URL: source.url, VDI_API_TOKEN: token.body.token });
    expect(backup.code, backup.out).toBe(0);
    expect(backup.out).not.toContain(token.body.token);
    expect(existsSync(archive)).toBe(true);
    expect(filesIn(join(sourceDir, 'backups')).filter((f) => f.endsWith('.partial'))).toEqual([]);
    // The console's answer: the last backup and its job.
    const listed = await api<{ last: { name: string } | null; job: { status: string } | null }>(source.url, admin, '/admin/backups');
    expect(listed.body.last?.name).toMatch(/^backup-.*\.tar\.gz$/);
    expect(listed.body.job?.status).toBe('done');
    expect(filesIn(join(sourceDir, 'backups'))).toEqual([listed.body.last!.name]);
    await stop(source, sourceDir);

    // A fresh machine: an empty DATA_DIR and database.
    const targetDir = join(work, 'restored');
    const targetDb = await freshDatabase('vdi_backup_dst');
    const restored = await cli(['restore', archive], { DATA_DIR: targetDir, ...targetDb });
    expect(restored.code, restored.out).toBe(0);
    expect(filesIn(work).filter((f) => f.includes('.partial'))).toEqual([]);
    expect(readFileSync(join(targetDir, 'secret.key'), 'utf8')).toBe(readFileSync(join(sourceDir, 'secret.key'), 'utf8'));

    const target = await startServerProcess(targetDir, { ...NO_PIECES, ...targetDb });
    servers.push(target);
    try {
      // Signed in with the same passwords; the same people, desktop, booking and audit entries.
      const admin2 = await signIn(target.url, 'admin');
      const uma2 = await signIn(target.url, 'user');
      const users2 = await api<{ items: { username: string }[] }>(target.url, admin2, '/admin/users?per_page=100');
      expect(users2.body.items.map((u) => u.username).sort()).toEqual(seen.users);
      const audit2 = await api<{ items: { id: number }[] }>(target.url, admin2, '/admin/audit?per_page=200');
      const ids2 = new Set(audit2.body.items.map((e) => e.id));
      expect(seen.audit.filter((id) => !ids2.has(id))).toEqual([]);
      const bookings = await api<{ id: string }[]>(
        target.url,
        uma2,
        `/bookings/user?startDate=${encodeURIComponent(bookingDate(new Date(start.getTime() - 3_600_000)))}&endDate=${encodeURIComponent(bookingDate(new Date(start.getTime() + 3_600_000)))}`,
      );
      expect(JSON.stringify(bookings.body)).toContain(seen.booking);
      // The desktop's disk is there and attached: it starts.
      const started = await api(target.url, uma2, `/desktop/start/${seen.desktop.id}`);
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      await until('the restored desktop to start', async () => {
        const list = await api<{ id: string; state: string }[]>(target.url, uma2, '/user/desktops');
        const d = list.body.find((x) => x.id === seen.desktop.id);
        if (d?.state === 'Failed') throw new Error(`the restored desktop failed: ${JSON.stringify(d)}`);
        return d?.state === 'Started' || d?.state === 'WaitingIP';
      }, 90_000);
      // The audit log goes on after the restored entries (its sequence restored).
      await api(target.url, admin2, '/user/api-tokens', { body: { name: 'after', scope: 'read', expires: null } });
      const audit3 = await api<{ items: { id: number }[] }>(target.url, admin2, '/admin/audit?per_page=5');
      expect(Math.max(...audit3.body.items.map((e) => e.id))).toBeGreaterThan(Math.max(...seen.audit));
    } finally {
      await stop(target, targetDir);
    }

    // Restoring again onto it: refused, nothing changed.
    const again = await cli(['restore', archive], { DATA_DIR: targetDir, ...targetDb });
    expect(again.code).toBe(2);
    expect(again.out).toMatch(/DATA_DIR .* is not empty/);
    if (adminUrl) {
      // An empty DATA_DIR but a database in use: refused too.
      const other = await cli(['restore', archive], { DATA_DIR: join(work, 'other'), ...targetDb });
      expect(other.code).toBe(2);
      expect(other.out).toMatch(/database .* is not empty/);
      expect(existsSync(join(work, 'other')) ? readdirSync(join(work, 'other')) : []).toEqual([]);
    }
  }, scaled(600_000));

  /** Restoring `file` into a fresh place: refused with exit code 2 (or `code`) and `message`, nothing written. */
  async function refused(file: string, message: RegExp, code = 2) {
    const dir = join(work, `refused-${Math.random().toString(36).slice(2, 8)}`);
    const db = await freshDatabase('vdi_backup_ref');
    const r = await cli(['restore', file], { DATA_DIR: dir, ...db });
    expect(r.code, r.out).toBe(code);
    expect(r.out).toMatch(message);
    expect(existsSync(dir)).toBe(false);
    expect(filesIn(work).filter((f) => f.includes('.partial'))).toEqual([]);
    if (db.DATABASE_URL) {
      // Nothing was made in the database: no table, not even the migrations' one.
      const client = new pg.Client({ connectionString: db.DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname IN ('public', 'drizzle')`);
        expect(rows).toEqual([{ n: 0 }]);
        const { rows: left } = await client.query(
          `SELECT (SELECT count(*)::int FROM pg_namespace WHERE nspname = 'drizzle') AS schemas,
                  (SELECT count(*)::int FROM pg_class WHERE relnamespace = 'public'::regnamespace) AS relations,
                  (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'public'::regnamespace) AS functions`,
        );
        expect(left).toEqual([{ schemas: 0, relations: 0, functions: 0 }]);
      } finally {
        await client.end();
      }
    }
  }

  it('refuses a truncated archive, a foreign one and one of a newer schema, before writing anything', async () => {
    expect(existsSync(archive)).toBe(true);
    const whole = readFileSync(archive);
    const truncated = join(work, 'truncated.tar.gz');
    writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length * 0.6)));
    await refused(truncated, /The backup is incomplete/);

    const foreign = join(work, 'foreign.tar.gz');
    await new Promise((resolve) => spawn('tar', ['czf', foreign, '-C', root, 'package.json'], { stdio: 'ignore' }).on('exit', resolve));
    await refused(foreign, /not a backup of this portal/);
    const notGzip = join(work, 'notes.txt');
    writeFileSync(notGzip, 'a shopping list\n');
    await refused(notGzip, /not a backup of this portal/);

    // The same backup, its manifest saying a newer schema wrote it.
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    await new Promise((resolve) => spawn('tar', ['xzf', archive, '-C', unpacked], { stdio: 'ignore' }).on('exit', resolve));
    const manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8'));
    manifest.database.migration += 86_400_000;
    writeFileSync(join(unpacked, 'manifest.json'), JSON.stringify(manifest));
    const newer = join(work, 'newer.tar.gz');
    await new Promise((resolve) => spawn('tar', ['czf', newer, '-C', unpacked, 'database', 'data', 'manifest.json'], { stdio: 'ignore' }).on('exit', resolve));
    rmSync(unpacked, { recursive: true, force: true });
    await refused(newer, /This backup was written by a newer version of the portal.*Nothing was changed/);
  }, scaled(180_000));

  it('removes what it made when loading the rows fails: no migrated empty database, no DATA_DIR', async () => {
    expect(existsSync(archive)).toBe(true);
    // The same backup, one user's row twice (its checksums made again: the archive is whole, its rows are not loadable).
    const unpacked = join(work, 'unpacked-dup');
    mkdirSync(unpacked);
    await new Promise((resolve) => spawn('tar', ['xzf', archive, '-C', unpacked], { stdio: 'ignore' }).on('exit', resolve));
    const usersFile = join(unpacked, 'database', 'users.jsonl');
    const lines = readFileSync(usersFile, 'utf8').split('\n').filter(Boolean);
    const twice = [...lines, lines[0]!].join('\n') + '\n';
    writeFileSync(usersFile, twice);
    const manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8'));
    manifest.database.tables.users += 1;
    manifest.entries['database/users.jsonl'] = { size: Buffer.byteLength(twice), sha256: createHash('sha256').update(twice).digest('hex') };
    writeFileSync(join(unpacked, 'manifest.json'), JSON.stringify(manifest));
    const broken = join(work, 'duplicate-user.tar.gz');
    await new Promise((resolve) => spawn('tar', ['czf', broken, '-C', unpacked, 'database', 'data', 'manifest.json'], { stdio: 'ignore' }).on('exit', resolve));
    rmSync(unpacked, { recursive: true, force: true });
    await refused(broken, /The restore failed while loading the database \(the rows of users: duplicate key.*What it had made was removed/s, 1);
  }, scaled(180_000));

  it('gives up with a clear message when the portal stops answering', async () => {
    // A portal that takes the backup's request, says it runs, then answers nothing more (hung, or its machine gone).
    let polls = 0;
    const hung = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/api/v3/admin/backups') {
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'job-1', status: 'queued', progress: 0, error: null, name: null }));
      } else if (req.url === '/api/v3/admin/backups/job/job-1' && ++polls === 1) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'job-1', status: 'running', progress: 10, error: null, name: null }));
      }
      // else: never answered
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const out = join(work, 'from-a-silent-portal.tar.gz');
    try {
      const limit = Math.max(1, Math.round(scaled(2_000) / 1000));
      const t0 = Date.now();
      const r = await cli(['backup', '--out', out], { PORTAL_URL: url, VDI_API_TOKEN: 'vdi_not-a-real-token', BACKUP_ANSWER_SECONDS: String(limit) });
      expect(r.code, r.out).toBe(1);
      expect(r.out).toMatch(new RegExp(`the portal at ${url} stopped answering \\(nothing within ${limit} s while GET /admin/backups/job/job-1\\)\\. No backup was downloaded`));
      expect(r.out).not.toContain('vdi_not-a-real-token');
      expect(Date.now() - t0).toBeLessThan(scaled(30_000));
      expect(polls).toBeGreaterThanOrEqual(2);
    } finally {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    }
    expect(existsSync(out) || existsSync(`${out}.partial`)).toBe(false);
    // Nothing listening at all: said as clearly.
    const gone = await cli(['backup', '--out', out], { PORTAL_URL: url, VDI_API_TOKEN: 'vdi_not-a-real-token' });
    expect(gone.code, gone.out).toBe(1);
    expect(gone.out).toMatch(/the portal at .* does not answer \(ECONNREFUSED while POST \/admin\/backups\)/);
    expect(existsSync(out)).toBe(false);
  }, scaled(120_000));

  it('keeps the newest BACKUP_KEEP backups, never the one just made, and touches nothing else', async () => {
    const dir = join(work, 'kept');
    mkdirSync(dir);
    const names = ['2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01'].map((d) => `backup-${d}T02-00-00-000Z.tar.gz`);
    for (const [i, n] of names.entries()) {
      writeFileSync(join(dir, n), 'x');
      utimesSync(join(dir, n), new Date(Date.UTC(2026, i, 1)), new Date(Date.UTC(2026, i, 1)));
    }
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    writeFileSync(join(dir, `${names[0]}.abcd.partial`), 'under way');
    expect(await pruneBackups(dir, 0)).toEqual([]);
    expect(await pruneBackups(dir, 2, names[0])).toEqual([names[1]]);
    expect(readdirSync(dir).sort()).toEqual([names[0]!, `${names[0]}.abcd.partial`, names[2]!, names[3]!, 'notes.txt'].sort());
    expect(await pruneBackups(dir, 1)).toEqual([names[2], names[0]]);
    expect(readdirSync(dir).sort()).toEqual([`${names[0]}.abcd.partial`, names[3]!, 'notes.txt'].sort());
  });

  it('leaves no archive when the disk fills while backing up', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip('mounting a small tmpfs needs root');
    const small = join(work, 'small');
    mkdirSync(small);
    const mounted = await new Promise<number | null>((resolve) => spawn('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', small], { stdio: 'ignore' }).on('exit', resolve));
    if (mounted !== 0) return ctx.skip('this machine lets no tmpfs be mounted');
    cleanups.push(() => new Promise((resolve) => spawn('umount', [small], { stdio: 'ignore' }).on('exit', resolve)));
    // An installation bigger than the room: a data directory with a 1 MiB file of noise (no compression helps).
    const dataDir = join(work, 'big');
    mkdirSync(join(dataDir, 'vpn'), { recursive: true });
    writeFileSync(join(dataDir, 'vpn', 'noise'), Buffer.from(Array.from({ length: 1 << 20 }, () => Math.floor(Math.random() * 256))));
    const database = await openDatabase({ dir: join(dataDir, 'db') });
    try {
      expect((await poolOf(database).query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await expect(makeBackup({ database, dataDir, outDir: join(small, 'backups') })).rejects.toThrow(/No space left on the disk of .*: no backup was made, and nothing of it was kept/);
      expect(readdirSync(join(small, 'backups'))).toEqual([]);
    } finally {
      await database.close();
    }
    // The command (portal stopped: --offline), its DATA_DIR/backups on the small disk: a clear message, nothing kept.
    symlinkSync(join(small, 'backups'), join(dataDir, 'backups'));
    const r = await cli(['backup', '--offline'], { DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/failed: No space left on the disk of .*backups \(ENOSPC\): no backup was made/);
    expect(readdirSync(join(small, 'backups'))).toEqual([]);
  }, scaled(120_000));
});

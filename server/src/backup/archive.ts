// Backups of an installation (issue 29): the database, read in one snapshot (a REPEATABLE READ, READ ONLY
// transaction: consistent while the portal runs, on PGlite and on PostgreSQL alike — docs/decisions/0030),
// plus the settings and keys under DATA_DIR, in one `.tar.gz` with a manifest (format, product version,
// the schema's newest migration, database mode, a SHA-256 of every entry). Written under a temporary
// name and renamed when whole: a failure (a full disk) leaves no archive that looks good.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import type pg from 'pg';
import type { Database } from '../db';
import { migrationsFolder, poolOfDb } from '../db';
import { TarWriter } from './tar';

export const BACKUP_FORMAT = 'vdi-portal-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST = 'manifest.json';

export type BackupManifest = {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  product_version: string;
  created: string;
  database: { mode: 'pglite' | 'postgres'; migration: number; migrations: number; tables: Record<string, number> };
  /** Whether the desktops' and templates' disks (DATA_DIR/storage) are in it. */
  disks: boolean;
  /** Every other entry of the archive: its size and SHA-256. */
  entries: Record<string, { size: number; sha256: string }>;
};

export const productVersion = (): string =>
  (JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * What of DATA_DIR is never in a backup: the embedded database's files (dumped instead) and its lock,
 * the backups themselves, what runs now (sockets, leases, uploads under way, the quarantine) and the
 * demo guest images (built again). `storage` (the disks) only with `disks`.
 */
const SKIPPED = new Set(['db', 'db.lock', 'backups', 'run', 'network', 'upload-tmp', 'quarantine', 'test-cache']);
const skipped = (rel: string, disks: boolean): boolean => {
  const top = rel.split(sep)[0]!;
  if (SKIPPED.has(top)) return true;
  if (top === 'storage') return !disks || rel.split(sep)[1] === 'volatile';
  // images/: only the desktops' own pictures (the demo guest images are built again).
  if (top === 'images') return rel !== 'images' && !rel.startsWith(join('images', 'desktops'));
  return false;
};

/** The files of DATA_DIR a backup holds, as paths relative to it (folders first). */
async function dataFiles(dataDir: string, disks: boolean): Promise<{ rel: string; dir: boolean }[]> {
  const out: { rel: string; dir: boolean }[] = [];
  const walk = async (dir: string) => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      const rel = relative(dataDir, full);
      if (skipped(rel, disks) || entry.name.endsWith('.partial')) continue;
      if (entry.isDirectory()) {
        out.push({ rel, dir: true });
        await walk(full);
      } else if (entry.isFile()) out.push({ rel, dir: false });
    }
  };
  await walk(dataDir);
  return out;
}

/** The pool under drizzle. */
export const poolOf = (database: Pick<Database, 'db'>) => poolOfDb(database.db);

const ROWS_PER_FETCH = 2000;

/** Tables of the public schema no migration makes: socket.io's PostgreSQL adapter's (socket/peers.ts), live messages only. */
const NOT_OURS = new Set(['socket_io_attachments']);

export type BackupProgress = (percent: number, step: string) => Promise<void> | void;

/**
 * Makes a backup of the running installation into `outDir` (created), named by its time; answers its
 * path once it is whole. `signal` aborts it (nothing is left).
 */
export async function makeBackup(opts: {
  database: Pick<Database, 'db' | 'kind'>;
  dataDir: string;
  outDir: string;
  disks?: boolean;
  name?: string;
  signal?: AbortSignal;
  progress?: BackupProgress;
}): Promise<{ path: string; name: string; size: number; manifest: BackupManifest }> {
  const disks = opts.disks ?? false;
  const created = new Date();
  const name = opts.name ?? `backup-${created.toISOString().replace(/[:.]/g, '-')}.tar.gz`;
  await mkdir(opts.outDir, { recursive: true, mode: 0o700 });
  const final = join(opts.outDir, name);
  const partial = `${final}.${randomBytes(4).toString('hex')}.partial`;
  const staging = await mkdtempIn(opts.outDir);
  const entries: BackupManifest['entries'] = {};
  try {
    // 1. The database, one snapshot, each table to a file (its rows as JSON lines).
    // (No progress written while the snapshot is open: the embedded database is one session, and the job's
    // progress is a write to it that would wait for the snapshot's end.)
    const db = await dumpDatabase(opts.database, staging, opts.signal);
    await opts.progress?.(40, 'database');
    // 2. The archive: the tables, the files of DATA_DIR, the manifest last (an archive cut short has none).
    const files = await dataFiles(opts.dataDir, disks);
    const gzip = createGzip({ level: 6 });
    const out = createWriteStream(partial, { mode: 0o600 });
    const closed = new Promise<void>((resolve, reject) => {
      out.on('close', resolve);
      out.on('error', reject);
      gzip.on('error', reject);
    });
    // The file failing (a full disk): the archive's writer stops at once, with that error.
    out.on('error', (err) => gzip.destroy(err));
    closed.catch(() => undefined);
    gzip.pipe(out);
    const tar = new TarWriter(gzip);
    const add = async (entryName: string, path: string) => {
      opts.signal?.throwIfAborted();
      const st = await stat(path);
      const hash = createHash('sha256');
      await tar.addFile(entryName, path, st, (c) => hash.update(c));
      entries[entryName] = { size: st.size, sha256: hash.digest('hex') };
    };
    const writing = (async () => {
      await tar.addDir('database');
      for (const table of Object.keys(db.tables)) await add(`database/${table}.jsonl`, join(staging, `${table}.jsonl`));
      await add('database/sequences.json', join(staging, 'sequences.json'));
      await tar.addDir('data');
      let done = 0;
      for (const f of files) {
        if (f.dir) await tar.addDir(`data/${f.rel.split(sep).join('/')}`);
        else await add(`data/${f.rel.split(sep).join('/')}`, join(opts.dataDir, f.rel));
        await opts.progress?.(40 + (55 * ++done) / Math.max(1, files.length), 'files');
      }
      const manifest: BackupManifest = {
        format: BACKUP_FORMAT,
        format_version: BACKUP_FORMAT_VERSION,
        product_version: productVersion(),
        created: created.toISOString(),
        database: { mode: opts.database.kind, migration: db.migration, migrations: db.migrations, tables: db.tables },
        disks,
        entries,
      };
      await tar.addBuffer(MANIFEST, Buffer.from(JSON.stringify(manifest, null, 2)));
      await tar.end();
      gzip.end();
      return manifest;
    })();
    let manifest: BackupManifest;
    try {
      manifest = await writing;
      await closed;
    } catch (err) {
      gzip.destroy();
      out.destroy();
      await closed.catch(() => undefined);
      throw err;
    }
    // On disk before it gets its name.
    const fh = await open(partial, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(partial, final);
    await opts.progress?.(100, 'done');
    return { path: final, name, size: (await stat(final)).size, manifest };
  } catch (err) {
    await rm(partial, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC') {
      throw Object.assign(new Error(`No space left on the disk of ${opts.outDir} (ENOSPC): no backup was made, and nothing of it was kept. Free some space (or keep fewer backups: BACKUP_KEEP) and make it again.`), { code: 'ENOSPC', cause: err });
    }
    throw err;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Deletes the backups under `outDir` beyond the newest `keep` (BACKUP_KEEP; 0 keeps them all), never
 * `made` (the one just written). Answers the names deleted. Only files named like our backups are touched.
 */
export async function pruneBackups(outDir: string, keep: number, made?: string): Promise<string[]> {
  if (keep <= 0) return [];
  // Newest first by the time in their names (backup-<ISO time>.tar.gz), then by their files' times.
  const all = (await listBackups(outDir)).sort((a, b) => b.name.localeCompare(a.name) || b.created.getTime() - a.created.getTime());
  const kept = new Set(all.slice(0, keep).map((b) => b.name));
  if (made) kept.add(made);
  const gone: string[] = [];
  for (const b of all) {
    if (kept.has(b.name)) continue;
    await rm(join(outDir, b.name), { force: true });
    gone.push(b.name);
  }
  return gone;
}

async function mkdtempIn(dir: string): Promise<string> {
  const path = join(dir, `.staging-${randomBytes(6).toString('hex')}.partial`);
  await mkdir(path, { mode: 0o700 });
  return path;
}

/** The tables of the public schema, in name order. */
export async function publicTables(q: Pick<pg.PoolClient, 'query'>): Promise<string[]> {
  const { rows } = await q.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
  return rows.map((r) => r.name);
}

/** Every table's rows into `dir`/<table>.jsonl and the sequences into sequences.json, read in one snapshot. */
async function dumpDatabase(database: Pick<Database, 'db'>, dir: string, signal: AbortSignal | undefined) {
  const client = await poolOf(database).connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const { rows: mig } = await client.query<{ n: number; newest: string | null }>('SELECT count(*)::int AS n, max(created_at)::text AS newest FROM drizzle.__drizzle_migrations');
      const tables: Record<string, number> = {};
      const names = (await publicTables(client)).filter((t) => !NOT_OURS.has(t));
      for (const table of names) {
        signal?.throwIfAborted();
        const fh = await open(join(dir, `${table}.jsonl`), 'w', 0o600);
        let n = 0;
        try {
          // The backup under way is not in its own archive (restored, it would read as interrupted).
          const where = table === 'jobs' ? ` WHERE NOT (t.kind = 'backup' AND t.status IN ('queued', 'running'))` : '';
          await client.query(`DECLARE dump NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS j FROM "${table}" t${where}`);
          for (;;) {
            const { rows } = await client.query<{ j: string }>(`FETCH ${ROWS_PER_FETCH} FROM dump`);
            if (rows.length === 0) break;
            n += rows.length;
            await fh.write(rows.map((r) => r.j).join('\n') + '\n');
          }
          await client.query('CLOSE dump');
          await fh.sync();
        } finally {
          await fh.close();
        }
        tables[table] = n;
      }
      const { rows: seqs } = await client.query<{ name: string; value: string | null }>(
        `SELECT sequencename AS name, last_value::text AS value FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename`,
      );
      const ours = seqs.filter((s) => ![...NOT_OURS].some((t) => s.name.startsWith(`${t}_`)));
      const fh = await open(join(dir, 'sequences.json'), 'w', 0o600);
      try {
        await fh.write(JSON.stringify(Object.fromEntries(ours.map((s) => [s.name, s.value]))));
        await fh.sync();
      } finally {
        await fh.close();
      }
      return { tables, migration: Number(mig[0]?.newest ?? 0), migrations: mig[0]?.n ?? 0 };
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
  } finally {
    client.release();
  }
}

/** A backup under `outDir` with its size and time (the newest first); `.partial` ones are not backups. */
export async function listBackups(outDir: string): Promise<{ name: string; size: number; created: Date }[]> {
  const names = await readdir(outDir).catch(() => [] as string[]);
  const out: { name: string; size: number; created: Date }[] = [];
  for (const name of names) {
    if (!/^backup-[\w.-]+\.tar\.gz$/.test(name)) continue;
    const st = await lstat(join(outDir, name)).catch(() => null);
    if (st?.isFile()) out.push({ name, size: st.size, created: st.mtime });
  }
  return out.sort((a, b) => b.created.getTime() - a.created.getTime());
}

export { migrationsFolder };

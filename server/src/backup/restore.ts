// Restores a backup (archive.ts) onto a fresh machine: an empty DATA_DIR and, on PostgreSQL, an empty
// database. Everything is checked before anything is written to either: the archive is read whole
// into a staging folder beside DATA_DIR (a truncated or foreign archive, a checksum that differs, a
// backup of a newer schema: refused, the staging folder removed), then the database is loaded in one
// transaction and the staging folder becomes DATA_DIR by a rename.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, open, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import pg from 'pg';
import { migrationsFolder, newestKnownMigration, openDatabase, SchemaTooNewError } from '../db';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, MANIFEST, poolOf, publicTables, type BackupManifest } from './archive';
import { readTar } from './tar';

/** A restore refused before anything was written: `reason` says why (the command prints it). */
export class RestoreRefused extends Error {
  constructor(readonly reason: 'truncated' | 'foreign' | 'corrupt' | 'newer' | 'not_empty', message: string) {
    super(message);
  }
}

const FOREIGN = 'This file is not a backup of this portal (no manifest of ours in it).';
const TRUNCATED = 'The backup is incomplete (the file ends early: cut short while copied, or a backup that never finished). Nothing was changed.';

/** Refuses a DATA_DIR or database that holds anything. */
async function requireEmptyTargets(dataDir: string, databaseUrl?: string) {
  const there = await readdir(dataDir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)));
  if (there.length > 0) {
    throw new RestoreRefused('not_empty', `DATA_DIR (${dataDir}) is not empty: a backup is restored onto a fresh machine only. Nothing was changed.`);
  }
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const tables = await publicTables(client);
      const { rows } = await client.query<{ there: boolean }>(`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS there`);
      if (tables.length > 0 || rows[0]?.there) {
        throw new RestoreRefused('not_empty', 'The database (DATABASE_URL) is not empty: restore into a new, empty database. Nothing was changed.');
      }
    } finally {
      await client.end();
    }
  }
}

/** The archive's entries into `staging` (database/ and data/), each checksummed; the manifest checked against them. */
async function unpack(archive: string, staging: string): Promise<BackupManifest> {
  const sums = new Map<string, { size: number; sha256: string }>();
  let manifest: BackupManifest | undefined;
  let sawEntry = false;
  let ended: boolean;
  try {
    const input = createReadStream(archive).pipe(createGunzip());
    ({ ended } = await readTar(input, async (entry, content) => {
      sawEntry = true;
      const name = entry.name;
      if (name === MANIFEST) {
        const chunks: Buffer[] = [];
        for await (const c of content) chunks.push(c);
        try {
          manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BackupManifest;
        } catch {
          throw new RestoreRefused('foreign', FOREIGN);
        }
        return;
      }
      const parts = name.split('/');
      if (!['database', 'data'].includes(parts[0]!) || parts.some((p) => p === '..' || p === '' || p === '.') || name.startsWith('/')) {
        throw new RestoreRefused('foreign', `${FOREIGN} (an entry ${JSON.stringify(name)} of no backup of ours)`);
      }
      const target = join(staging, ...parts);
      if (entry.dir) {
        await mkdir(target, { recursive: true, mode: 0o700 });
        return;
      }
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      const hash = createHash('sha256');
      const fh = await open(target, 'w', entry.mode & 0o777 || 0o600);
      let size = 0;
      try {
        for await (const c of content) {
          hash.update(c);
          size += c.length;
          await fh.write(c);
        }
      } finally {
        await fh.close();
      }
      sums.set(name, { size, sha256: hash.digest('hex') });
    }));
  } catch (err) {
    if (err instanceof RestoreRefused) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const message = err instanceof Error ? err.message : String(err);
    if (code === 'Z_BUF_ERROR' || /unexpected end|ends in the middle/.test(message)) throw new RestoreRefused(manifest || sawEntry ? 'truncated' : 'foreign', manifest || sawEntry ? TRUNCATED : FOREIGN);
    if (code === 'Z_DATA_ERROR' || /incorrect header|not a tar/.test(message)) throw new RestoreRefused('foreign', FOREIGN);
    throw err;
  }
  if (!manifest) throw new RestoreRefused(sawEntry ? 'truncated' : 'foreign', sawEntry ? TRUNCATED : FOREIGN);
  if (manifest.format !== BACKUP_FORMAT) throw new RestoreRefused('foreign', FOREIGN);
  if (!ended) throw new RestoreRefused('truncated', TRUNCATED);
  if (manifest.format_version > BACKUP_FORMAT_VERSION) {
    throw new RestoreRefused('newer', `This backup was made by a newer version of the portal (${manifest.product_version}, archive format ${manifest.format_version}). Nothing was changed: restore it with that version or a newer one.`);
  }
  const expected = Object.entries(manifest.entries ?? {});
  for (const [name, want] of expected) {
    const got = sums.get(name);
    if (!got) throw new RestoreRefused('truncated', `${TRUNCATED} (${name} is missing)`);
    if (got.sha256 !== want.sha256 || got.size !== want.size) throw new RestoreRefused('corrupt', `The backup is damaged: ${name} does not match its checksum. Nothing was changed.`);
  }
  if (sums.size !== expected.length) throw new RestoreRefused('corrupt', 'The backup holds files its manifest does not list. Nothing was changed.');
  return manifest;
}

type Objects = { schemas: Set<string>; relations: Set<string>; functions: Set<string>; types: Set<string> };

/** The schemas, and the relations, functions and types of the public schema, of the database at `url`. */
async function objectsOf(url: string): Promise<Objects> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const q = async (text: string) => new Set((await client.query<{ n: string }>(text)).rows.map((r) => r.n));
    return {
      schemas: await q(`SELECT quote_ident(nspname) AS n FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'`),
      relations: await q(`SELECT relkind::text || ' ' || oid::regclass::text AS n FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p', 'v', 'm', 'S', 'f')`),
      functions: await q(`SELECT oid::regprocedure::text AS n FROM pg_proc WHERE pronamespace = 'public'::regnamespace`),
      types: await q(`SELECT oid::regtype::text AS n FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typtype IN ('e', 'd', 'c', 'r', 'm') AND typrelid = 0`),
    };
  } finally {
    await client.end();
  }
}

/** Drops what appeared in the database at `url` since `before` (objectsOf): the restore's migrations and tables. */
async function dropMadeSince(url: string, before: Objects) {
  const now = await objectsOf(url);
  const made = <T>(set: Set<T>, was: Set<T>) => [...set].filter((x) => !was.has(x));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const schema of made(now.schemas, before.schemas)) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    const kinds: Record<string, string> = { r: 'TABLE', p: 'TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', S: 'SEQUENCE', f: 'FOREIGN TABLE' };
    // Tables first (their identity columns' sequences, triggers and indexes go with them), then views, then sequences left.
    const rank = (rel: string) => 'rpfmvS'.indexOf(rel[0]!);
    for (const rel of made(now.relations, before.relations).sort((x, y) => rank(x) - rank(y))) {
      const [kind, ...name] = rel.split(' ');
      await client.query(`DROP ${kinds[kind!]} IF EXISTS ${name.join(' ')} CASCADE`);
    }
    for (const fn of made(now.functions, before.functions)) await client.query(`DROP FUNCTION IF EXISTS ${fn} CASCADE`);
    for (const type of made(now.types, before.types)) await client.query(`DROP TYPE IF EXISTS ${type} CASCADE`);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

type Journal = { entries: { idx: number; when: number; tag: string }[] };

/** The migrations folder as the version that made the backup had it (its first `n` migrations), or this one's. */
async function migrationsUpTo(when: number, scratch: string[]): Promise<string> {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as Journal;
  const entries = journal.entries.filter((e) => e.when <= when);
  if (entries.length === journal.entries.length) return migrationsFolder;
  const dir = await mkdtemp(join(tmpdir(), 'vdi-restore-migrations-'));
  scratch.push(dir);
  await cp(migrationsFolder, dir, { recursive: true });
  await writeFile(join(dir, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
  return dir;
}

const INSERT_BATCH = 500;

/** Loads the dumped tables (staging/database) into a database migrated as the backup's, in one transaction. */
async function load(pool: pg.Pool, dumpDir: string, manifest: BackupManifest) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const tables = await publicTables(client);
    const unknown = Object.keys(manifest.database.tables).filter((t) => !tables.includes(t));
    if (unknown.length) throw new Error(`the backup has tables this schema has not: ${unknown.join(', ')}`);
    // Foreign keys off while the tables fill in any order, then added again (which checks every row);
    // the tables' own triggers (counters, the audit log's guard) off: the rows are restored as they were.
    const { rows: fks } = await client.query<{ tbl: string; name: string; def: string }>(
      `SELECT c.conrelid::regclass::text AS tbl, c.conname AS name, pg_get_constraintdef(c.oid) AS def
         FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace ORDER BY c.conname`,
    );
    for (const fk of fks) await client.query(`ALTER TABLE ${fk.tbl} DROP CONSTRAINT "${fk.name}"`);
    if (tables.length) await client.query(`TRUNCATE ${tables.map((t) => `"${t}"`).join(', ')}`);
    for (const table of tables) await client.query(`ALTER TABLE "${table}" DISABLE TRIGGER USER`);
    for (const [table, count] of Object.entries(manifest.database.tables)) {
      const { rows: cols } = await client.query<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
        [`"${table}"`],
      );
      const list = cols.map((c) => `"${c.name}"`).join(', ');
      const insert = `INSERT INTO "${table}" (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM json_populate_recordset(NULL::"${table}", $1::json)`;
      let batch: string[] = [];
      let n = 0;
      const flush = async () => {
        if (!batch.length) return;
        await client.query(insert, [`[${batch.join(',')}]`]);
        n += batch.length;
        batch = [];
      };
      const lines = createInterface({ input: createReadStream(join(dumpDir, `${table}.jsonl`)), crlfDelay: Infinity });
      try {
        for await (const line of lines) {
          if (!line) continue;
          batch.push(line);
          if (batch.length >= INSERT_BATCH) await flush();
        }
        await flush();
      } catch (err) {
        throw new Error(`the rows of ${table}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      if (n !== count) throw new Error(`${table}: ${n} rows read, the manifest says ${count}`);
    }
    for (const table of tables) await client.query(`ALTER TABLE "${table}" ENABLE TRIGGER USER`);
    for (const fk of fks) await client.query(`ALTER TABLE ${fk.tbl} ADD CONSTRAINT "${fk.name}" ${fk.def}`);
    const sequences = JSON.parse(await readFile(join(dumpDir, 'sequences.json'), 'utf8')) as Record<string, string | null>;
    for (const [seq, value] of Object.entries(sequences)) {
      // (A sequence of a table no migration makes — socket.io's — is not restored.)
      const { rows: there } = await client.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [`"${seq}"`]);
      if (!there[0]?.ok) continue;
      if (value === null) await client.query('SELECT setval($1::regclass, 1, false)', [`"${seq}"`]);
      else await client.query('SELECT setval($1::regclass, $2::bigint)', [`"${seq}"`, value]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Restores `archive` into `dataDir` (absent or empty) and the database (`databaseUrl`, empty; else the
 * embedded one under DATA_DIR/db). Answers the backup's manifest. Throws `RestoreRefused` before
 * writing anything when the archive or the targets will not do.
 */
export async function restoreBackup(opts: { archive: string; dataDir: string; databaseUrl?: string; log?: (line: string) => void }): Promise<BackupManifest> {
  const log = opts.log ?? (() => {});
  const dataDir = resolve(opts.dataDir);
  await requireEmptyTargets(dataDir, opts.databaseUrl);
  await mkdir(dirname(dataDir), { recursive: true });
  const staging = join(dirname(dataDir), `.${basename(dataDir)}.restore-${randomBytes(4).toString('hex')}.partial`);
  await mkdir(staging, { mode: 0o700 });
  const scratch: string[] = [];
  try {
    log(`reading ${opts.archive}`);
    const manifest = await unpack(opts.archive, staging);
    const known = newestKnownMigration();
    if (manifest.database.migration > known) {
      throw new RestoreRefused('newer', new SchemaTooNewError(manifest.database.migration, known).message.replace('This database', 'This backup'));
    }
    log(`backup of ${manifest.created} (portal ${manifest.product_version}, ${manifest.database.mode} database): checks passed`);
    // Again, just before writing: nothing appeared meanwhile.
    await requireEmptyTargets(dataDir, opts.databaseUrl);
    const migrations = await migrationsUpTo(manifest.database.migration, scratch);
    // PostgreSQL: what the database holds before the migrations, so that a failure below removes what the
    // restore made (and only that): never a migrated, empty database left behind. (The embedded one is
    // made inside the staging folder, removed on the way out.)
    const before = opts.databaseUrl ? await objectsOf(opts.databaseUrl) : null;
    try {
      const database = await openDatabase(opts.databaseUrl ? { url: opts.databaseUrl, migrations } : { dir: join(staging, 'data', 'db'), migrations });
      try {
        await load(poolOf(database), join(staging, 'database'), manifest);
      } finally {
        await database.close();
      }
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      if (before) {
        await dropMadeSince(opts.databaseUrl!, before).catch((dropErr: unknown) => {
          throw new Error(`The restore failed while loading the database (${why}), and what it had made in the database could not be removed (${dropErr instanceof Error ? dropErr.message : String(dropErr)}): empty the database before trying again. DATA_DIR was not written.`);
        });
      }
      throw new Error(`The restore failed while loading the database (${why}). What it had made was removed: the database is as empty as before and DATA_DIR was not written.`, { cause: err });
    }
    log(`database restored (${Object.values(manifest.database.tables).reduce((a, b) => a + b, 0)} rows)`);
    await mkdir(join(staging, 'data'), { recursive: true, mode: 0o700 });
    await rmdir(dataDir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
    await rename(join(staging, 'data'), dataDir);
    log(`files restored into ${dataDir}`);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
    for (const dir of scratch) await rm(dir, { recursive: true, force: true });
  }
}

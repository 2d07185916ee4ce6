// `npm run backup` and `npm run restore` (README "Backup and restore").
//
//   npm run backup [-- --out <file or folder>] [--disks]
//     Asks the running portal (PORTAL_URL, default http://localhost:$PORT) to make a backup — the embedded
//     database's folder is the running server's alone — and downloads it. Credentials: an admin's API token
//     in VDI_API_TOKEN or in the file named by VDI_API_TOKEN_FILE (never on the command line).
//   npm run backup -- --offline [--out …] [--disks]
//     With the portal stopped: opens DATA_DIR / DATABASE_URL itself (refused while a server holds it).
//   npm run restore -- <archive>
//     Restores onto a fresh machine: DATA_DIR must be empty or absent, DATABASE_URL (if set) an empty database.
import { createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openDatabase, SchemaTooNewError } from '../db';
import { DataDirLockedError } from '../db/lock';
import { makeBackup, pruneBackups } from './archive';
import { restoreBackup, RestoreRefused } from './restore';

const say = (line: string) => process.stderr.write(`${line}\n`);

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}

async function outPath(out: string | undefined, name: string): Promise<string> {
  const target = resolve(out ?? '.');
  const st = await stat(target).catch(() => null);
  return st?.isDirectory() ? join(target, name) : target;
}

async function tokenFromEnv(): Promise<string> {
  if (process.env.VDI_API_TOKEN) return process.env.VDI_API_TOKEN.trim();
  if (process.env.VDI_API_TOKEN_FILE) return (await readFile(process.env.VDI_API_TOKEN_FILE, 'utf8')).trim();
  throw new Error('Set VDI_API_TOKEN (or VDI_API_TOKEN_FILE) to an admin\'s API token (Profile → API tokens), or use --offline with the portal stopped.');
}

/** How long the portal may stay silent (no answer, no byte of the download) before the command gives up: BACKUP_ANSWER_SECONDS, 60 by default. */
function answerLimitMs(): number {
  const raw = process.env.BACKUP_ANSWER_SECONDS;
  const seconds = raw === undefined || raw === '' ? 60 : Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`BACKUP_ANSWER_SECONDS must be a number of seconds above 0, not ${JSON.stringify(raw)}`);
  return seconds * 1000;
}

/** The portal did not answer (refused, unreachable, or silent past the limit): what the person reads. */
class PortalSilent extends Error {}

async function backupThroughServer(args: string[]) {
  const base = (process.env.PORTAL_URL ?? `http://localhost:${process.env.PORT ?? 8080}`).replace(/\/$/, '');
  const headers = { authorization: `Bearer ${await tokenFromEnv()}` };
  const limit = answerLimitMs();
  const silent = (what: string, err: unknown) => {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code;
    return (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError'
      ? new PortalSilent(`the portal at ${base} stopped answering (nothing within ${limit / 1000} s while ${what}). No backup was downloaded; see whether the portal runs, then try again (BACKUP_ANSWER_SECONDS sets the limit).`)
      : new PortalSilent(`the portal at ${base} does not answer (${cause ?? (err as Error).message} while ${what}). No backup was downloaded; see whether it runs and PORTAL_URL names it.`);
  };
  const call = async (path: string, init: RequestInit = {}, what = `${init.method ?? 'GET'} ${path}`) => {
    let res: Response;
    try {
      res = await fetch(`${base}/api/v3${path}`, { ...init, headers: { ...headers, ...(init.headers ?? {}) }, signal: AbortSignal.timeout(limit) });
    } catch (err) {
      throw silent(what, err);
    }
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as { description?: string; description_code?: string };
      throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${body.description_code ?? ''} ${body.description ?? ''}`.trim());
    }
    return res;
  };
  const started = (await (await call('/admin/backups', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ disks: args.includes('--disks') }) })).json()) as { id: string };
  say(`backup job ${started.id} started on ${base}`);
  let job: { status: string; progress: number; error: string | null; name: string | null };
  let shown = -1;
  for (;;) {
    job = (await (await call(`/admin/backups/job/${started.id}`)).json()) as typeof job;
    if (job.progress !== shown) say(`  ${job.status} ${(shown = job.progress)}%`);
    if (!['queued', 'running'].includes(job.status)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  if (job.status !== 'done' || !job.name) throw new Error(`the backup ${job.status}: ${job.error ?? 'no archive'}`);
  const target = await outPath(option(args, '--out'), job.name);
  const partial = `${target}.partial`;
  // The download: given up when no byte comes for the limit (the server stopped answering half-way).
  const stalled = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const watch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => stalled.abort(Object.assign(new Error('silent'), { name: 'TimeoutError' })), limit);
  };
  try {
    watch();
    let res: Response;
    try {
      res = await fetch(`${base}/api/v3/admin/backups/file/${encodeURIComponent(job.name)}`, { headers, signal: stalled.signal });
    } catch (err) {
      throw silent('downloading the backup', err);
    }
    if (!res.ok) throw new Error(`GET /admin/backups/file/${job.name}: ${res.status}`);
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    body.on('data', watch);
    await pipeline(body, createWriteStream(partial, { mode: 0o600 })).catch((err: unknown) => {
      throw stalled.signal.aborted ? silent('downloading the backup', stalled.signal.reason) : err;
    });
    await rename(partial, target);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  } finally {
    clearTimeout(timer);
  }
  say(`backup written to ${target} (${(await stat(target)).size} bytes; also kept on the server under DATA_DIR/backups/${job.name})`);
}

async function backupOffline(args: string[]) {
  const dataDir = resolve(process.env.DATA_DIR ?? './data');
  const url = process.env.DATABASE_URL || undefined;
  const database = await openDatabase(url ? { url } : { dir: join(dataDir, 'db') });
  try {
    const out = option(args, '--out');
    const made = await makeBackup({
      database,
      dataDir,
      outDir: join(dataDir, 'backups'),
      disks: args.includes('--disks'),
      progress: () => undefined,
    });
    const target = await outPath(out, made.name);
    if (out) {
      await rename(made.path, target).catch(async () => {
        await pipeline((await import('node:fs')).createReadStream(made.path), createWriteStream(`${target}.partial`, { mode: 0o600 }));
        await rename(`${target}.partial`, target);
      });
    }
    say(`backup written to ${out ? target : made.path} (${made.size} bytes)`);
    if (!out) {
      const keep = process.env.BACKUP_KEEP === undefined || process.env.BACKUP_KEEP === '' ? 7 : Number(process.env.BACKUP_KEEP);
      if (Number.isInteger(keep) && keep >= 0) {
        const gone = await pruneBackups(join(dataDir, 'backups'), keep, made.name);
        if (gone.length) say(`older backups deleted (BACKUP_KEEP=${keep}): ${gone.join(', ')}`);
      }
    }
  } finally {
    await database.close();
  }
}

async function restore(args: string[]) {
  const archive = args.find((a) => !a.startsWith('--'));
  if (!archive) throw new Error('usage: npm run restore -- <backup .tar.gz>');
  const dataDir = resolve(process.env.DATA_DIR ?? './data');
  const manifest = await restoreBackup({ archive: resolve(archive), dataDir, databaseUrl: process.env.DATABASE_URL || undefined, log: say });
  say(`restored ${basename(archive)} (made ${manifest.created} by portal ${manifest.product_version}${manifest.disks ? ', with the disks' : ''}); start the portal with DATA_DIR=${dataDir}${process.env.DATABASE_URL ? ' and the same DATABASE_URL' : ''}.`);
}

const [command, ...args] = process.argv.slice(2);
try {
  if (command === 'backup') await (args.includes('--offline') ? backupOffline(args) : backupThroughServer(args));
  else if (command === 'restore') await restore(args);
  else throw new Error('usage: cli.ts backup [--out <file>] [--disks] [--offline] | restore <archive>');
  process.exit(0);
} catch (err) {
  if (err instanceof RestoreRefused || err instanceof SchemaTooNewError || err instanceof DataDirLockedError) {
    say(`refused: ${err.message}`);
    process.exit(2);
  }
  say(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

// The embedded database's options side by side (not a test, not part of `npm run bench`):
//   node --import tsx server/bench/db-loop.bench.ts            every candidate, each in a fresh process
//   node --import tsx server/bench/db-loop.bench.ts worker 1   one candidate (inproc | worker <pool> | postgres)
// PostgreSQL is measured when TEST_DATABASE_URL (an admin URL) is set. Figures: docs/decisions/0001-embedded-database-in-a-worker-thread.md.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { startEmbedded } from '../src/db/embedded';

type Query = (text: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;
type Candidate = { query: Query; transaction: (fn: (q: Query) => Promise<void>) => Promise<void>; close: () => Promise<void> };

const SELECTS = 2000;
const WRITES = 100;
const CALLERS = 50;

function fromPool(pool: pg.Pool, close: () => Promise<void>): Candidate {
  return {
    query: (text, params) => pool.query(text, params),
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await fn((text, params) => client.query(text, params));
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close,
  };
}

async function open(kind: string, poolSize: number): Promise<Candidate> {
  if (kind === 'inproc') {
    const db = await PGlite.create();
    return {
      query: (text, params) => db.query(text, params),
      transaction: (fn) => db.transaction((tx) => fn((text, params) => tx.query(text, params))).then(() => {}),
      close: () => db.close(),
    };
  }
  if (kind === 'worker') {
    const server = await startEmbedded(undefined);
    const pool = new pg.Pool({ stream: server.stream, max: poolSize, user: 'postgres', database: 'postgres' });
    return fromPool(pool, async () => {
      await pool.end();
      await server.close();
    });
  }
  if (kind === 'postgres') {
    const admin = process.env.TEST_DATABASE_URL!;
    const name = `vdi_bench_${process.pid}`;
    const run = async (text: string) => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(text);
      await c.end();
    };
    await run(`CREATE DATABASE ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: poolSize });
    return fromPool(pool, async () => {
      await pool.end();
      await run(`DROP DATABASE ${name} WITH (FORCE)`);
    });
  }
  throw new Error(`unknown candidate ${kind}`);
}

async function measure(kind: string, poolSize: number) {
  const t0 = performance.now();
  const db = await open(kind, poolSize);
  const startMs = performance.now() - t0;
  await db.query('CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL, n int NOT NULL DEFAULT 0, at timestamptz NOT NULL DEFAULT now(), data jsonb)');
  await db.query(`INSERT INTO items (name, data) SELECT 'item ' || g, jsonb_build_object('g', g) FROM generate_series(1, 1000) g`);

  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  // A timer that should fire every millisecond: the longest gap is how long the loop was held.
  let last = performance.now();
  let longestGap = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 1);
  let next = 0;
  let wrong = 0;
  let errors = 0;
  const every = Math.floor((SELECTS + WRITES) / WRITES);
  const w0 = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      for (let i = next++; i < SELECTS + WRITES; i = next++) {
        try {
          if (i % every === 0) {
            await db.transaction(async (q) => {
              const { rows } = await q('SELECT n FROM items WHERE id = 1 FOR UPDATE');
              await q('UPDATE items SET n = $1 WHERE id = 1', [Number(rows[0]!.n) + 1]);
            });
          } else {
            const id = 1 + (i % 1000);
            const { rows } = await db.query('SELECT id, name, at, data FROM items WHERE id = $1', [id]);
            if (rows[0]?.id !== id) wrong++;
          }
        } catch {
          errors++;
        }
      }
    }),
  );
  const wallMs = performance.now() - w0;
  await new Promise((r) => setTimeout(r, 20));
  clearInterval(probe);
  delay.disable();
  const { rows } = await db.query('SELECT n FROM items WHERE id = 1');
  const writes = Math.ceil((SELECTS + WRITES) / every);
  await db.close();
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  console.log(
    [
      `${kind}${kind === 'inproc' ? '' : ` pool ${poolSize}`}`.padEnd(16),
      `start ${startMs.toFixed(0).padStart(6)} ms`,
      `${((SELECTS + WRITES) / (wallMs / 1000)).toFixed(0).padStart(5)} ops/s`,
      `loop delay p99 ${delay.count ? ms(delay.percentile(99)) : '—'} ms, max ${delay.count ? ms(delay.max) : '—'} ms`,
      `longest gap ${longestGap.toFixed(0)} ms`,
      `wrong ${wrong}, errors ${errors}, lost updates ${writes - Number(rows[0]!.n)}`,
      `load ${loadavg()[0]!.toFixed(1)}`,
    ].join('  '),
  );
}

const [kind, pool] = process.argv.slice(2);
if (kind) {
  await measure(kind, Number(pool ?? 1));
} else {
  const runs: string[][] = [['inproc'], ['worker', '1'], ['worker', '4']];
  if (process.env.TEST_DATABASE_URL) runs.push(['postgres', '10']);
  for (const args of runs) {
    spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' });
  }
}

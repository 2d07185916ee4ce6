import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startEmbedded, type EmbeddedServer } from './embedded';

// Several wire connections share PGlite's one session: each owns it until it is idle again.
let server: EmbeddedServer;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startEmbedded(undefined);
  pool = new pg.Pool({ stream: server.stream, max: 4, user: 'postgres', database: 'postgres' });
  await pool.query('CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)');
  await pool.query('INSERT INTO counter VALUES (1, 0)');
});
afterAll(async () => {
  await pool?.end();
  await server?.close();
});

it('keeps transactions and parameterised queries of concurrent connections apart', async () => {
  const bump = async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ n: number }>('SELECT n FROM counter WHERE id = $1', [1]);
      await client.query('UPDATE counter SET n = $1 WHERE id = $2', [rows[0]!.n + 1, 1]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  };
  const echo = async (i: number) => (await pool.query<{ v: number }>('SELECT $1::int AS v', [i])).rows[0]!.v === i;
  const results = await Promise.all(Array.from({ length: 90 }, (_, i) => (i % 3 === 0 ? bump().then(() => true) : echo(i))));
  expect(results.every(Boolean)).toBe(true);
  expect((await pool.query('SELECT n FROM counter')).rows[0].n).toBe(30);
});

it('rolls back the transaction of a connection that goes away, and frees the session', async () => {
  const client = await pool.connect();
  await client.query('BEGIN');
  await client.query('UPDATE counter SET n = -1');
  client.release(true); // destroys the connection in the middle of its transaction
  expect((await pool.query('SELECT n FROM counter')).rows[0].n).toBe(30);
});

it('shares named prepared statements between its connections: parsed once, a name reused for another text replaced', async () => {
  // Each connection remembers only what it parsed itself; without the worker's sharing the second
  // connection's Parse of the same name fails ("prepared statement … already exists").
  const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
  try {
    const named = { name: 'counter_of', text: 'SELECT n + $1::int AS v FROM counter WHERE id = 1' };
    for (const [i, c] of clients.entries()) {
      for (let k = 0; k < 2; k++) expect((await c.query<{ v: number }>({ ...named, values: [i] })).rows[0]!.v).toBe(30 + i);
    }
    // The session holds it once.
    const { rows } = await clients[0]!.query("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'counter_of'");
    expect(rows[0].n).toBe(1);
    // A fresh connection (its own memory empty) that names another text gets that text.
    const fresh = new pg.Client({ stream: server.stream, user: 'postgres', database: 'postgres' });
    await fresh.connect();
    try {
      expect((await fresh.query<{ v: number }>({ name: 'counter_of', text: 'SELECT 7 + $1::int AS v', values: [1] })).rows[0]!.v).toBe(8);
    } finally {
      await fresh.end();
    }
    // A failed Parse is not remembered: the next one of the name is parsed (and fails) again.
    await expect(clients[1]!.query({ name: 'broken', text: 'SELECT nope FROM counter', values: [] })).rejects.toThrow(/nope/);
    await expect(clients[2]!.query({ name: 'broken', text: 'SELECT nope FROM counter', values: [] })).rejects.toThrow(/nope/);
  } finally {
    for (const c of clients) c.release();
  }
});

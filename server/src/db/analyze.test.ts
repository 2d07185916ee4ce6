import { scaled } from '../../test/helpers/slowdown';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './index';

// The embedded server has no autovacuum: the portal refreshes the planner's statistics itself,
// or a table that grew is planned as if it were empty (whole-table sorts instead of its index).
describe('embedded database statistics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vdi-analyze-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are fresh after a start: a table that grew is known by its size', async () => {
    const first = await openDatabase({ dir: join(dir, 'db') });
    await first.db.execute(sql`create table grown (n int primary key, label text)`);
    await first.db.execute(sql`insert into grown select g, 'row ' || g from generate_series(1, 3000) g`);
    await first.close();

    const again = await openDatabase({ dir: join(dir, 'db') });
    try {
      const rows = (await again.db.execute(sql`select reltuples from pg_class where relname = 'grown'`)) as unknown as { rows: { reltuples: number }[] };
      expect(Number(rows.rows[0]!.reltuples)).toBeGreaterThan(2_500);
    } finally {
      await again.close();
    }
  }, scaled(120_000));
});

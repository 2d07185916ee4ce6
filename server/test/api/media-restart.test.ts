import { scaled } from '../helpers/slowdown';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../../src/config';
import { buildApp, createContext } from '../../src/app';
import { schema } from '../../src/db';
import { createLocalEngine, type Engine } from '../../src/engine';
import { seed } from '../../src/seed/seed';
import { startMediaFileServer } from '../helpers/media-file-server';
import { openTestDatabase } from '../helpers/db';
import { DEMO_PASSWORD, endEngine, testImagesDir } from '../helpers/server';

const dataDir = mkdtempSync(join(tmpdir(), 'vm-'));
const engines: Engine[] = [];
afterAll(async () => {
  for (const e of engines) await endEngine(e);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('media downloads across a server restart', () => {
  it('a download cut by a shutdown starts again after the restart and completes', async () => {
    const files = await startMediaFileServer(join(testImagesDir(), 'demo.iso'));
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO_PASSWORD, WEB_DIST: join(dataDir, 'none'), MEDIA_ALLOW_PRIVATE_URLS: '1' });
    const database = await openTestDatabase();
    try {
      await seed(database.db, { demo: true, demoPassword: DEMO_PASSWORD });
      const engine = await createLocalEngine({ dataDir, accel: 'auto' });
      engines.push(engine);
      const app1 = await buildApp(createContext(config, database, engine));
      const login = await app1.inject({
        method: 'POST',
        url: '/authentication/login?provider=form&category_id=default',
        payload: `username=advanced&password=${DEMO_PASSWORD}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      files.rate.bytesPerSecond = 512 * 1024;
      const created = await app1.inject({
        method: 'POST',
        url: '/api/v3/media',
        headers: { authorization: `Bearer ${login.body}` },
        payload: { name: 'Survives restarts', url: `${files.base}/throttled.iso`, kind: 'iso' },
      });
      expect(created.statusCode, created.body).toBe(200);
      const { id } = created.json() as { id: string };
      const row = async () => (await database.db.select().from(schema.media).where(eq(schema.media.id, id)))[0]!;
      const until = Date.now() + scaled(10_000);
      while (((await row()).progress?.received_bytes ?? 0) === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));

      // The server stops mid-download: the job stays "running" to be resumed.
      await app1.close();
      expect((await row()).status).toBe('Downloading');
      const [job] = await database.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id));
      expect(job!.status).toBe('running');

      files.rate.bytesPerSecond = 32 * 1024 * 1024;
      const gets = files.requests.filter((r) => r === 'GET /throttled.iso').length;
      const app2 = await buildApp(createContext(config, database, engine));
      try {
        const done = Date.now() + scaled(20_000);
        while ((await row()).status !== 'Downloaded' && Date.now() < done) await new Promise((r) => setTimeout(r, 100));
        expect(await row()).toMatchObject({ status: 'Downloaded', size: files.iso.length });
        expect(files.requests.filter((r) => r === 'GET /throttled.iso').length).toBe(gets + 1);
        expect(readdirSync(join(dataDir, 'storage', 'media'))).toEqual([`${id}.iso`]);
        const jobs = await database.db.select().from(schema.jobs).where(eq(schema.jobs.targetId, id));
        expect(jobs.map((j) => j.status)).toEqual(['done']);
      } finally {
        await app2.close();
      }
    } finally {
      await database.close();
      await files.close();
    }
  }, scaled(120_000));
});

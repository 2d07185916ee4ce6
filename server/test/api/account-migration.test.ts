import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { QUOTA_FIELDS, ZMigrationExport, ZUserConfig, type TQuota } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, login, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';

let server: TestServer;
const tokens: Record<string, string> = {};
const tokenOf = async (u: string) => {
  if (tokens[u]) return tokens[u];
  if (u !== 'researcher') return (tokens[u] = await loginToken(server, u));
  const { token } = await login(server, u, undefined, 'lab');
  return (tokens[u] = token!);
};
const NO_EXCEPTIONS = { categories: [] as string[], groups: [] as string[], roles: [] as string[], users: [] as string[] };

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const enable = (on: boolean, force = false, exceptions = NO_EXCEPTIONS) =>
  server.ctx.settings.set('migration', { local: { export: on, import: on, force_migration: force }, exceptions });
const exportAs = async (u: string) => call(server, '/api/v3/user_migration/export', { token: await tokenOf(u), method: 'POST' });
const codeOf = async (u: string) => {
  const res = await exportAs(u);
  expect(res.status).toBe(200);
  return ZMigrationExport.parse(await res.json()).token;
};
const importAs = async (u: string, code: string) => call(server, '/api/v3/user_migration/import', { token: await tokenOf(u), body: { token: code } });
const refusal = async (res: Response) => ({ status: res.status, code: (await res.json()).description_code as string });
const owned = async (u: string) =>
  server.ctx.db.select({ id: schema.domains.id }).from(schema.domains).where(eq(schema.domains.userId, await userIdOf(server, u)));

describe('user migration', () => {
  it('is refused while the provider does not allow it', async () => {
    await enable(false);
    expect(await refusal(await exportAs('student01'))).toEqual({ status: 428, code: 'migration_not_enabled' });
    expect(await refusal(await importAs('student02', 'x'))).toEqual({ status: 428, code: 'migration_not_enabled' });
  });

  it('refuses a code that is not one', async () => {
    await enable(true);
    expect(await refusal(await importAs('student02', 'not-a-code'))).toEqual({ status: 400, code: 'invalid_token' });
    // A session token is a token, but not a migration code.
    expect(await refusal(await importAs('student02', await tokenOf('student01')))).toEqual({ status: 400, code: 'invalid_token' });
  });

  it('a new code invalidates the previous one; the same account is refused', async () => {
    const first = await codeOf('student01');
    const second = await codeOf('student01');
    expect(second).not.toBe(first);
    expect(await refusal(await importAs('student02', first))).toEqual({ status: 404, code: 'migration_not_found' });
    expect(await refusal(await importAs('student01', second))).toEqual({ status: 400, code: 'migration_same_user' });
  });

  it('refuses another category, an admin origin and a higher role', async () => {
    expect(await refusal(await importAs('researcher', await codeOf('advanced')))).toEqual({ status: 428, code: 'different_category_migration' });
    expect(await refusal(await importAs('manager', await codeOf('admin')))).toEqual({ status: 428, code: 'role_migration_admin' });
    expect(await refusal(await importAs('advanced', await codeOf('student03')))).toEqual({ status: 428, code: 'role_migration_higher' });
  });

  it('refuses templates to a user account', async () => {
    const advancedId = await userIdOf(server, 'advanced');
    const [desk] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.userId, advancedId));
    await server.ctx.db.update(schema.domains).set({ kind: 'template' }).where(eq(schema.domains.id, desk!.id));
    try {
      // A user-role target of an advanced origin: the rank check passes (lower), templates do not.
      expect(await refusal(await importAs('student04', await codeOf('advanced')))).toEqual({ status: 428, code: 'role_migration_user' });
    } finally {
      await server.ctx.db.update(schema.domains).set({ kind: 'desktop' }).where(eq(schema.domains.id, desk!.id));
    }
  });

  it("refuses what does not fit in the target's quota", async () => {
    const id = await userIdOf(server, 'student04');
    const quota = Object.fromEntries(QUOTA_FIELDS.map((f) => [f, 1000])) as TQuota;
    await server.ctx.db.update(schema.users).set({ quota: { ...quota, desktops: 1 } }).where(eq(schema.users.id, id));
    try {
      expect(await refusal(await importAs('student04', await codeOf('student03')))).toEqual({ status: 428, code: 'migration_desktop_quota_error' });
    } finally {
      await server.ctx.db.update(schema.users).set({ quota: null }).where(eq(schema.users.id, id));
    }
  });

  it('refuses an expired code', async () => {
    const code = await codeOf('student03');
    const id = await userIdOf(server, 'student03');
    await server.ctx.db.update(schema.userMigrations).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(schema.userMigrations.originUserId, id));
    expect(await refusal(await importAs('student04', code))).toEqual({ status: 400, code: 'token_expired' });
  });

  it('moves the desktops with their disks to the target; the code is then used and the origin has nothing left', async () => {
    const from = await owned('student01');
    expect(from.length).toBeGreaterThan(0);
    const before = (await owned('student02')).length;
    const code = await codeOf('student01');
    const res = await importAs('student02', code);
    expect(res.status).toBe(200);
    const target = await userIdOf(server, 'student02');
    expect((await owned('student02')).length).toBe(before + from.length);
    expect(await owned('student01')).toEqual([]);
    const disks = await server.ctx.db
      .select({ userId: schema.storage.userId })
      .from(schema.storage)
      .innerJoin(schema.domainDisks, eq(schema.domainDisks.storageId, schema.storage.id))
      .where(and(eq(schema.domainDisks.domainId, from[0]!.id)));
    expect(disks.length).toBeGreaterThan(0);
    expect(disks.every((d) => d.userId === target)).toBe(true);
    const list = await (await call(server, '/api/v3/user/desktops', { token: await tokenOf('student02') })).json();
    expect((list as { id: string }[]).map((d) => d.id)).toContain(from[0]!.id);
    expect(await refusal(await importAs('student02', code))).toEqual({ status: 400, code: 'migration_code_used' });
    // The origin account is disabled and signed out, as the original removes it.
    expect((await call(server, '/api/v3/user', { token: tokens.student01 })).status).toBe(401);
    expect((await login(server, 'student01')).res.status).toBe(403);
    // Its code cannot be used again even if the account came back empty.
    await server.ctx.db.update(schema.users).set({ active: true }).where(eq(schema.users.id, await userIdOf(server, 'student01')));
    delete tokens.student01;
    expect(await refusal(await exportAs('student01'))).toEqual({ status: 400, code: 'migration_no_items_available' });
  });

  it('an account takes one migration only: a second import is refused (403 multiple_migrations_found) and moves nothing', async () => {
    const from = await owned('student03');
    expect(from.length).toBeGreaterThan(0);
    const before = (await owned('student02')).length;
    expect(await refusal(await importAs('student02', await codeOf('student03')))).toEqual({ status: 403, code: 'multiple_migrations_found' });
    expect((await owned('student02')).length).toBe(before);
    expect((await owned('student03')).length).toBe(from.length);
  });

  it("answers the signed-in account's own import (what moved, from whom, when), or nothing", async () => {
    const mine = await (await call(server, '/api/v3/user_migration/result', { token: await tokenOf('student02') })).json();
    expect(mine.migration).toMatchObject({ origin_username: 'student01', templates: 0, media: 0, deployments: 0 });
    expect(mine.migration.desktops).toBeGreaterThan(0);
    expect(Math.abs(mine.migration.migrated_at - Date.now() / 1000)).toBeLessThan(600);
    expect(await (await call(server, '/api/v3/user_migration/result', { token: await tokenOf('student04') })).json()).toEqual({ migration: null });
  });

  it('forced migration blocks everyone but the exceptions (migrations_block)', async () => {
    const config = async (u: string) => ZUserConfig.parse(await (await call(server, '/api/v3/user/config', { token: await tokenOf(u) })).json());
    await enable(true, true, { ...NO_EXCEPTIONS, roles: ['admin'], users: [await userIdOf(server, 'student04')] });
    try {
      expect((await config('student03')).migrations_block).toBe(true);
      expect((await config('student04')).migrations_block).toBe(false);
      expect((await config('admin')).migrations_block).toBe(false);
    } finally {
      await enable(false);
    }
    expect((await config('student03')).migrations_block).toBe(false);
  });
});

import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, ne } from 'drizzle-orm';
import { ZSignInDesktop, type TSignInDesktop } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';

// "My desktop at sign-in" (issue 30): what signing in opens — the person's choice, else their group's.

let server: TestServer;
let admin: string;
let sara: string; // student01, Students 1A (one desktop in the demo data)
let pau: string; // student02, Students 1A
let demoTemplate: string;

beforeAll(async () => {
  server = await startTestServer();
  [admin, sara, pau] = await Promise.all(['admin', 'student01', 'student02'].map((u) => loginToken(server, u)));
  const [t] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.kind, 'template'));
  demoTemplate = t!.id;
}, scaled(120_000));
afterAll(async () => server?.close());

const get = async (token: string): Promise<TSignInDesktop> => {
  const r = await call(server, '/api/v3/user/sign-in-desktop', { token });
  expect(r.status).toBe(200);
  return ZSignInDesktop.parse(await r.json());
};
const put = (token: string, open: unknown) => call(server, '/api/v3/user/sign-in-desktop', { token, method: 'PUT', body: { open } });
const codeOf = async (r: Response) => `${r.status} ${((await r.json()) as { description_code?: string }).description_code ?? ''}`;
const newDesktop = async (token: string, name: string) => {
  const r = await call(server, '/api/v3/persistent_desktop', { token, body: { template_id: demoTemplate, name } });
  expect(r.status, await r.clone().text()).toBe(200);
  return ((await r.json()) as { id: string }).id;
};
const setGroup = async (on: boolean) => {
  const r = await call(server, '/api/v3/admin/groups/default-students-1a', { token: admin, method: 'PUT', body: { open_desktop_at_sign_in: on } });
  expect(r.status, await r.clone().text()).toBe(200);
  expect(((await r.json()) as { open_desktop_at_sign_in: boolean }).open_desktop_at_sign_in).toBe(on);
};

describe('what signing in opens', () => {
  it('is the desktops screen by default', async () => {
    expect(await get(sara)).toEqual({ open: 'group', group_default: false, opens: null });
  });

  it('is the only desktop when the group says so, and the list again with a second one', async () => {
    // Each student has one desktop in the demo data.
    const [only] = await server.ctx.db.select().from(schema.domains).where(and(eq(schema.domains.kind, 'desktop'), eq(schema.domains.userId, await userIdOf(server, 'student01'))));
    expect((await get(sara)).opens).toBeNull();
    await setGroup(true);
    try {
      expect(await get(sara)).toEqual({ open: 'group', group_default: true, opens: { desktop_id: only!.id, pool_id: null, name: only!.name, viewer: 'browser-vnc' } });
      const second = await newDesktop(sara, 'Sara two');
      expect((await get(sara)).opens).toBeNull();
      // The person's own choice wins over the group's: one of the two, or the list.
      expect((await put(sara, { desktop_id: second })).status).toBe(200);
      expect((await get(sara)).opens).toMatchObject({ desktop_id: second, name: 'Sara two' });
      expect((await put(sara, 'list')).status).toBe(200);
      expect(await get(sara)).toMatchObject({ open: 'list', opens: null });
      expect((await put(sara, 'group')).status).toBe(200);
      expect((await get(sara)).open).toBe('group');
    } finally {
      await setGroup(false);
    }
  });

  it('refuses a desktop that is not the person’s, or one without a browser viewer', async () => {
    const saraId = await userIdOf(server, 'student01');
    const [theirs] = await server.ctx.db.select({ id: schema.domains.id, userId: schema.domains.userId }).from(schema.domains).where(and(eq(schema.domains.kind, 'desktop'), ne(schema.domains.userId, saraId))).limit(1);
    expect(await codeOf(await put(sara, { desktop_id: theirs!.id }))).toBe('400 sign_in_desktop_invalid');
    expect(await codeOf(await put(sara, { desktop_id: 'no-such-desktop' }))).toBe('400 sign_in_desktop_invalid');
    const noBrowser = await newDesktop(sara, 'Sara files only');
    const [row] = await server.ctx.db.select().from(schema.domains).where(eq(schema.domains.id, noBrowser));
    const guest = row!.guestProperties as { viewers: Record<string, unknown> };
    await server.ctx.db
      .update(schema.domains)
      .set({ guestProperties: { ...guest, viewers: { file_spice: guest.viewers.file_spice ?? { options: null } } } as typeof row.guestProperties })
      .where(eq(schema.domains.id, noBrowser));
    expect(await codeOf(await put(sara, { desktop_id: noBrowser }))).toBe('400 sign_in_desktop_invalid');
  });

  it('forgets a chosen desktop that is gone: the list again', async () => {
    const mine = await newDesktop(pau, 'Pau one');
    expect((await put(pau, { desktop_id: mine })).status).toBe(200);
    expect((await get(pau)).opens?.desktop_id).toBe(mine);
    expect((await call(server, `/api/v3/desktop/${mine}/permanent`, { token: pau, method: 'DELETE' })).status).toBe(200);
    expect(await get(pau)).toMatchObject({ open: { desktop_id: mine }, opens: null });
  });

  it('refuses a bad body with a code', async () => {
    expect(await codeOf(await put(sara, 'everything'))).toMatch(/^400 /);
    expect(await codeOf(await call(server, '/api/v3/user/sign-in-desktop', { token: sara, method: 'PUT', body: { open: { desktop_id: '' } } }))).toMatch(/^400 /);
  });
});

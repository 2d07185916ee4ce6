// Sign-in with a directory (issue 27): Debian's slapd in its own process (helpers/slapd.ts) over StartTLS and
// LDAPS with a test CA; the admin connects it through the API, people sign in on the normal form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { and, eq, like } from 'drizzle-orm';
import { schema } from '../../src/db';
import { createLog } from '../../src/http/log';
import { authenticateLdap, escapeFilterValue, fillFilter, photoOf } from '../../src/identity/ldap';
import { ZLdapSettings } from '@vdi/contracts';
import { call, login, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { describeIf } from '../helpers/can-run';
import { scaled } from '../helpers/slowdown';
import { freePort, GROUPS_BASE, PEOPLE_BASE, silentServer, slapdMissing, startSlapd, STUDENTS_DN, TEACHERS_DN, USER_FILTER, type Slapd } from '../helpers/slapd';

describe('the RFC 4515 escape of a typed name', () => {
  it('escapes the filter characters, NUL and other control characters, and keeps the rest', () => {
    expect(escapeFilterValue('*')).toBe('\\2a');
    expect(escapeFilterValue(')(uid=*')).toBe('\\29\\28uid=\\2a');
    expect(escapeFilterValue('a\\b')).toBe('a\\5cb');
    expect(escapeFilterValue('x\u0000y\n')).toBe('x\\00y\\0a');
    expect(escapeFilterValue('José Müller-d\'Arc')).toBe('José Müller-d\'Arc');
    expect(fillFilter('(&(uid={username})(member={dn}))', { username: 'a*', dn: 'cn=x (y),dc=z' })).toBe('(&(uid=a\\2a)(member=cn=x \\28y\\29,dc=z))');
  });

  it('keeps photos small and of image types only', () => {
    expect(photoOf(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).toMatch(/^data:image\/jpeg;base64,/);
    expect(photoOf(Buffer.alloc(300_000, 0xff))).toBe('');
    expect(photoOf(Buffer.from('<svg/>'))).toBe('');
    expect(photoOf('https://photos.example.org/a.jpg')).toBe('https://photos.example.org/a.jpg');
    expect(photoOf('javascript:alert(1)')).toBe('');
  });
});

describeIf(slapdMissing())('sign-in with an LDAP directory (real slapd)', () => {
  let slapd: Slapd;
  let server: TestServer;
  let admin: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    slapd = await startSlapd();
    server = await startTestServer({
      // Many wrong names below come from one address: its own limit is not what these tests are about.
      env: { LOGIN_ADDRESS_FAILURES: '1000', LOG_LEVEL: 'debug' },
      log: createLog('debug', { write: (line: string) => void logLines.push(line) }),
    });
    admin = await loginToken(server, 'admin');
  }, scaled(120_000));

  afterAll(async () => {
    await server?.close();
    await slapd?.stop();
  });

  const settings = (over: Record<string, unknown> = {}) => ({
    url: slapd.url,
    start_tls: true,
    ca: slapd.ca,
    bind_dn: slapd.bindDn,
    user_base: PEOPLE_BASE,
    user_filter: USER_FILTER,
    attributes: { username: 'uid', name: 'cn', email: 'mail', photo: 'jpegPhoto', groups: 'memberOf' },
    ...over,
  });
  const provider = (over: Record<string, unknown> = {}) => ({
    kind: 'ldap',
    name: 'School directory',
    category_id: 'default',
    rules: [
      { attribute: 'groups', value: TEACHERS_DN, group_id: 'default-teachers', role: 'advanced' },
      { attribute: 'groups', value: 'cn=students,*', group_id: 'default-students-1a', role: 'user' },
    ],
    unmatched: 'refuse',
    update_on_signin: true,
    max_role: 'advanced',
    settings: settings(),
    secret: slapd.bindPassword,
    ...over,
  });
  const create = async (over: Record<string, unknown> = {}) => {
    const res = await call(server, '/api/v3/admin/identity-providers', { token: admin, body: provider(over) });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body as { id: string; secret_set: boolean };
  };
  const update = async (id: string, over: Record<string, unknown>) => {
    const res = await call(server, `/api/v3/admin/identity-providers/${id}`, { token: admin, method: 'PUT', body: provider(over) });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const directoryUsers = (uid: string) =>
    server.ctx.db.select().from(schema.users).where(and(eq(schema.users.provider, 'ldap'), eq(schema.users.uid, uid)));
  const signIn = async (username: string, password: string) => {
    const { res, token } = await login(server, username, password);
    return { status: res.status, token, code: token ? undefined : ((await res.json()) as { description_code?: string }).description_code };
  };

  let providerId: string;

  it('the admin connects the directory: the bind password is never answered and is stored sealed', async () => {
    const made = await create();
    providerId = made.id;
    expect(made.secret_set).toBe(true);
    expect(JSON.stringify(made)).not.toContain(slapd.bindPassword);
    const list = await call(server, '/api/v3/admin/identity-providers', { token: admin });
    expect(await list.text()).not.toContain(slapd.bindPassword);
    const [row] = await server.ctx.db.select().from(schema.identityProviders).where(eq(schema.identityProviders.id, providerId));
    expect(row!.secret).toBeTruthy();
    expect(JSON.stringify(row)).not.toContain(slapd.bindPassword);
    // The form still signs in local accounts, and GET /authentication/providers lists it (LDAP signs in through it).
    const { providers } = await (await fetch(`${server.url}/authentication/providers`)).json();
    expect(providers).toContain('form');
  });

  it('a rule above the provider\'s highest role is refused at save', async () => {
    const res = await call(server, '/api/v3/admin/identity-providers', {
      token: admin,
      body: provider({ rules: [{ attribute: 'groups', value: TEACHERS_DN, group_id: 'default-teachers', role: 'admin' }] }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).description_code).toBe('identity_role_not_allowed');
  });

  it('"test" signs the account in and answers what would be created, creating nothing', async () => {
    const t = slapd.people.teacher;
    const res = await call(server, `/api/v3/admin/identity-providers/${providerId}/test`, { token: admin, body: { username: t.uid, password: t.password } });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.preview).toMatchObject({
      outcome: 'create', role: 'advanced', group_id: 'default-teachers', category_id: 'default', rule: 0,
      identity: { uid: t.uid, username: t.uid, name: t.name, email: t.email, groups: [TEACHERS_DN] },
    });
    expect(body.preview.identity.photo).toBe(`data:image/jpeg;base64,${slapd.teacherPhoto.toString('base64')}`);
    expect(await directoryUsers(t.uid)).toHaveLength(0);
    const wrong = await call(server, `/api/v3/admin/identity-providers/${providerId}/test`, { token: admin, body: { username: t.uid, password: 'not-it' } });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).description_code).toBe('login_failed');
  });

  it('the teacher signs in on the form: created with the mapped group and role, found again the next time', async () => {
    const t = slapd.people.teacher;
    const first = await signIn(t.uid, t.password);
    expect(first.status).toBe(200);
    expect(decodeJwt(first.token!)).toMatchObject({ data: { provider: 'ldap', role_id: 'advanced', group_id: 'default-teachers' } });
    const [user] = await directoryUsers(t.uid);
    expect(user).toMatchObject({ username: t.uid, groupId: 'default-teachers', roleId: 'advanced', categoryId: 'default', name: t.name, email: t.email, identityProviderId: providerId });
    expect(user!.photo).toMatch(/^data:image\/jpeg;base64,/);
    expect(user!.passwordHash ?? '').not.toContain(t.password);
    const me = await (await call(server, '/api/v3/user', { token: first.token })).json();
    expect(me).toMatchObject({ username: t.uid, role: 'advanced', group: 'default-teachers' });

    // The name as the directory matches it (any case) is the same person: the uid is the directory's value.
    const second = await signIn(t.uid.toUpperCase(), t.password);
    expect(second.status).toBe(200);
    expect(await directoryUsers(t.uid)).toHaveLength(1);
    expect((await directoryUsers(t.uid))[0]!.id).toBe(user!.id);
  });

  it('update_on_signin: when the directory moves the person to another group, the next sign-in changes the role', async () => {
    const t = slapd.people.teacher;
    slapd.modify(`dn: ${TEACHERS_DN}\nchangetype: modify\ndelete: member\nmember: ${t.dn}\n\ndn: ${STUDENTS_DN}\nchangetype: modify\nadd: member\nmember: ${t.dn}\n`);
    expect((await signIn(t.uid, t.password)).status).toBe(200);
    expect((await directoryUsers(t.uid))[0]).toMatchObject({ roleId: 'user', groupId: 'default-students-1a' });
    slapd.modify(`dn: ${STUDENTS_DN}\nchangetype: modify\ndelete: member\nmember: ${t.dn}\n\ndn: ${TEACHERS_DN}\nchangetype: modify\nadd: member\nmember: ${t.dn}\n`);
    expect((await signIn(t.uid, t.password)).status).toBe(200);
    expect((await directoryUsers(t.uid))[0]).toMatchObject({ roleId: 'advanced', groupId: 'default-teachers' });
  });

  it('a person disabled here stays refused whatever the directory says', async () => {
    const t = slapd.people.teacher;
    const [user] = await directoryUsers(t.uid);
    await server.ctx.db.update(schema.users).set({ active: false }).where(eq(schema.users.id, user!.id));
    expect(await signIn(t.uid, t.password)).toMatchObject({ status: 403, code: 'user_disabled' });
    await server.ctx.db.update(schema.users).set({ active: true }).where(eq(schema.users.id, user!.id));
    expect((await signIn(t.uid, t.password)).status).toBe(200);
  });

  it('a wrong password is 401 and counted by the sign-in limits; the directory\'s disabled account is nobody', async () => {
    const t = slapd.people.teacher;
    const failures = async (name: string) =>
      (await server.ctx.db.select().from(schema.loginThrottle).where(like(schema.loginThrottle.key, `login-account|%${name}%`)))[0]?.failures ?? 0;
    const before = await failures(t.uid);
    expect(await signIn(t.uid, 'not-the-password')).toMatchObject({ status: 401, code: 'login_failed' });
    expect(await failures(t.uid)).toBeGreaterThan(before);
    // Excluded by the provider's filter (as AD's userAccountControl "disabled" bit is), even with its right password.
    const d = slapd.people.disabled;
    expect(await signIn(d.uid, d.password)).toMatchObject({ status: 401, code: 'login_failed' });
    expect(await directoryUsers(d.uid)).toHaveLength(0);
  });

  it('LDAP filter injection in the user name finds nobody', async () => {
    const t = slapd.people.teacher;
    const d = slapd.people.disabled;
    // Unescaped, each of these would match the teacher (wildcards) or lift the filter's exclusion of the disabled person.
    const attempts: [string, string][] = [
      ['*', t.password],
      ['teach*', t.password],
      ['teacher1)(uid=*', t.password],
      ['*)(uid=teacher1', t.password],
      ['teacher1\\', t.password],
      [`${d.uid})(|(employeeType=nobody`, d.password],
      [`${d.uid})(!(uid=x)`, d.password],
    ];
    for (const [name, password] of attempts) {
      expect(await signIn(name, password), JSON.stringify(name)).toMatchObject({ status: 401, code: 'login_failed' });
    }
    // A NUL is refused before any check (the form's own validation).
    expect(await signIn('teacher1\u0000', t.password)).toMatchObject({ status: 400, code: 'invalid_characters' });
    attempts.push(['teacher1\u0000', t.password], ['teacher1\u0000*', t.password]);
    expect(await directoryUsers(d.uid)).toHaveLength(0);
    // The adapter itself, with the filter the injections aim at.
    const s = ZLdapSettings.parse(settings());
    for (const [name, password] of attempts) expect(await authenticateLdap(s, slapd.bindPassword, name, password), JSON.stringify(name)).toBeNull();
    // An empty password is never tried (an unauthenticated bind would succeed).
    expect(await authenticateLdap(s, slapd.bindPassword, t.uid, '')).toBeNull();
    // Without a bind account the search is anonymous: this directory hides even the base from it, which is the
    // admin's to fix (an error: the console's test answers 503), not a wrong password.
    await expect(authenticateLdap({ ...s, bind_dn: '' }, null, t.uid, t.password)).rejects.toThrow();
  });

  it('the person in no mapped group is refused with identity_not_allowed, or sent to the registration-code step', async () => {
    const o = slapd.people.outsider;
    expect(await signIn(o.uid, o.password)).toMatchObject({ status: 403, code: 'identity_not_allowed' });
    expect(await directoryUsers(o.uid)).toHaveLength(0);

    await update(providerId, { unmatched: 'register' });
    const step = await signIn(o.uid, o.password);
    expect(step.status).toBe(200);
    expect(decodeJwt(step.token!)).toMatchObject({ type: 'register', username: o.uid, category_id: 'default' });
    const [reg] = await server.ctx.db.select().from(schema.registrationCodes).where(eq(schema.registrationCodes.categoryId, 'default'));
    const registered = await call(server, '/api/v3/user/register', { token: step.token, body: { code: reg!.code } });
    expect(registered.status, await registered.clone().text()).toBe(200);
    const res = await fetch(`${server.url}/authentication/login?provider=form`, { method: 'POST', headers: { authorization: `Bearer ${step.token}` } });
    expect(res.status).toBe(200);
    const [user] = await directoryUsers(o.uid);
    expect(user).toMatchObject({ username: o.uid, name: o.name, categoryId: 'default' });
    // From now on the directory's password signs them in.
    expect((await signIn(o.uid, o.password)).status).toBe(200);
    await update(providerId, { unmatched: 'refuse' });
  });

  it('LDAPS with the CA works as StartTLS does; a certificate from another CA is refused', async () => {
    const s = slapd.people.student;
    const test = (id: string) => call(server, `/api/v3/admin/identity-providers/${id}/test`, { token: admin, body: { username: s.uid, password: s.password } });
    // LDAPS, and groups found by a search instead of memberOf.
    const ldaps = await create({
      name: 'LDAPS', settings: settings({ url: slapd.ldapsUrl, start_tls: false, group_base: GROUPS_BASE, group_filter: '(member={dn})', attributes: { username: 'uid', name: 'cn', email: 'mail', photo: '', groups: '' } }),
    });
    const viaLdaps = await test(ldaps.id);
    expect(viaLdaps.status).toBe(200);
    expect((await viaLdaps.json()).preview).toMatchObject({ outcome: 'create', role: 'user', group_id: 'default-students-1a', identity: { groups: [STUDENTS_DN] } });
    // Another CA, over LDAPS and StartTLS; the right CA on ldap:// without StartTLS (never in the clear when a CA is set).
    for (const over of [{ url: slapd.ldapsUrl, start_tls: false, ca: slapd.otherCa }, { start_tls: true, ca: slapd.otherCa }, { start_tls: false }]) {
      const wrongCa = await create({ name: 'TLS refused', settings: settings(over) });
      const res = await test(wrongCa.id);
      expect(res.status).toBe(503);
      expect((await res.json()).description_code).toBe('identity_provider_unavailable');
      await call(server, `/api/v3/admin/identity-providers/${wrongCa.id}`, { token: admin, method: 'DELETE' });
    }
    await call(server, `/api/v3/admin/identity-providers/${ldaps.id}`, { token: admin, method: 'DELETE' });
    // A bind account the directory refuses is the admin's to fix, not the person's wrong password.
    const wrongBind = await create({ name: 'Wrong bind password', secret: 'not-the-bind-password' });
    const res = await test(wrongBind.id);
    expect(res.status).toBe(503);
    expect((await res.json()).description_code).toBe('identity_provider_unavailable');
    await call(server, `/api/v3/admin/identity-providers/${wrongBind.id}`, { token: admin, method: 'DELETE' });
  });

  it('the directory down or hanging: local accounts still sign in, the directory\'s people get a clear answer, fast', async () => {
    const t = slapd.people.teacher;
    const hanging = await silentServer();
    try {
      for (const url of [`ldap://127.0.0.1:${await freePort()}`, hanging.url]) {
        await update(providerId, { settings: settings({ url }) });
        // (not the admin: a new session of theirs would end the one this test calls with)
        const local = await signIn('user', 'demo-pass-123');
        expect(local.status).toBe(200);
        const began = Date.now();
        expect(await signIn(t.uid, t.password)).toMatchObject({ status: 503, code: 'identity_provider_unavailable' });
        expect(Date.now() - began).toBeLessThan(scaled(20_000));
      }
    } finally {
      await hanging.close();
      await update(providerId, {});
    }
    expect((await signIn(t.uid, t.password)).status).toBe(200);
  }, scaled(90_000));

  it('no password and no bind secret in the server\'s log', () => {
    const log = logLines.join('');
    expect(log).toContain('directory not reachable');
    for (const secret of [slapd.bindPassword, ...Object.values(slapd.people).map((p) => p.password)]) expect(log).not.toContain(secret);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, desc, eq } from 'drizzle-orm';
import pino from 'pino';
import * as OTPAuth from 'otpauth';
import { ZAdminUserList, ZRecoveryCodes, ZTwoFactorEnrolment, ZTwoFactorStatus, type TTwoFactorEnrolment } from '@vdi/contracts';
import { schema } from '../../src/db';
import { scaled } from '../helpers/slowdown';
import { call, DEMO_PASSWORD, login, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { copyUser } from '../helpers/routes-fixtures';

// Two-factor sign-in for local accounts (issue 27): TOTP enrolled in the profile, asked after the password, recovery
// codes, limits on wrong codes, the admin's reset and requirement. Codes come from the otpauth library's own generator.

let server: TestServer;
let admin: string;
let manager: string;
const logged: string[] = [];
/** Every secret and recovery code the file's enrolments were shown: none may reach the log. */
const shown: string[] = [];
const STEP = 30_000;
const SLOW = scaled(120_000);

beforeAll(async () => {
  server = await startTestServer({ env: { LOG_LEVEL: 'trace', TRUST_PROXY: '127.0.0.1', PUBLIC_URL: 'https://portal.example.org' } });
  const stream = (server.ctx.log as unknown as Record<symbol, { write: (s: string) => unknown }>)[pino.symbols.streamSym]!;
  stream.write = (line: string) => logged.push(line);
  [admin, manager] = await Promise.all([loginToken(server, 'admin'), loginToken(server, 'manager')]);
  // People of their own for the limits (each test's failures count per person).
  for (const name of ['brute1', 'brute2', 'rekeyed']) await copyUser(server, { username: 'student02' }, name);
}, SLOW);
afterAll(async () => server?.close());

const codeOf = async (res: Response) => `${res.status} ${((await res.clone().json()) as { description_code?: string }).description_code ?? ''}`;
const typeOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { type?: string }).type ?? 'login';
const appOf = (e: TTwoFactorEnrolment) => OTPAuth.URI.parse(e.uri) as OTPAuth.TOTP;
/** A code of the next step: good (within the clock allowance) after the code of now was spent. */
const nextCode = (app: OTPAuth.TOTP, steps = 1) => app.generate({ timestamp: Date.now() + steps * STEP });
const userRow = async (username: string) => (await server.ctx.db.select().from(schema.users).where(and(eq(schema.users.username, username), eq(schema.users.categoryId, username === 'researcher' ? 'lab' : 'default'))))[0]!;
/** As if time passed: the last accepted step forgotten (codes of now are good again). */
const forgetLastStep = async (username: string) => server.ctx.db.update(schema.users).set({ totpLastStep: 0 }).where(eq(schema.users.id, (await userRow(username)).id));
const auditOf = async (username: string, action: string) =>
  server.ctx.db.select().from(schema.auditLog).where(and(eq(schema.auditLog.objectName, username), eq(schema.auditLog.action, action))).orderBy(desc(schema.auditLog.id));

/** POST /authentication/login continuing a step with a code (a form field, as the original clients post). */
async function continueWith(step: string, code?: string, headers: Record<string, string> = {}) {
  const form = new FormData();
  if (code !== undefined) form.append('code', code);
  const res = await fetch(`${server.url}/authentication/login?provider=form`, { method: 'POST', body: form, headers: { authorization: `Bearer ${step}`, ...headers } });
  return { res, token: res.ok ? await res.text() : undefined };
}

/** Enrols `username` in the profile: start, confirm with a code of now; answers the app and the recovery codes. */
async function enrol(username: string) {
  const session = await loginToken(server, username);
  const started = await call(server, '/api/v3/user/two-factor/enrolment', { token: session, method: 'POST' });
  expect(started.status, await started.clone().text()).toBe(200);
  const enrolment = ZTwoFactorEnrolment.parse(await started.json());
  const app = appOf(enrolment);
  const confirmed = await call(server, '/api/v3/user/two-factor/enrolment/confirm', { token: session, body: { code: app.generate() } });
  expect(confirmed.status, await confirmed.clone().text()).toBe(200);
  const { recovery_codes } = ZRecoveryCodes.parse(await confirmed.json());
  shown.push(enrolment.secret, ...recovery_codes);
  return { session, enrolment, app, recovery: recovery_codes };
}

describe('enrolment in the profile', () => {
  it('start: a secret, its otpauth URI and a QR image; pending until confirmed; the secret kept sealed', async () => {
    const session = await loginToken(server, 'advanced');
    const res = await call(server, '/api/v3/user/two-factor/enrolment', { token: session, method: 'POST' });
    const e = ZTwoFactorEnrolment.parse(await res.json());
    expect(e.uri).toMatch(/^otpauth:\/\/totp\/portal\.example\.org:advanced\?/);
    expect(e.uri).toContain(`secret=${e.secret}`);
    expect(e.qr).toMatch(/^data:image\/png;base64,/);
    const status = ZTwoFactorStatus.parse(await (await call(server, '/api/v3/user/two-factor', { token: session })).json());
    expect(status).toMatchObject({ enabled: false, pending: true, available: true });
    const row = await userRow('advanced');
    expect(row.totpPendingSecret).toMatch(/^v1\./);
    expect(row.totpPendingSecret).not.toContain(e.secret);
    // A wrong code does not turn it on.
    expect(await codeOf(await call(server, '/api/v3/user/two-factor/enrolment/confirm', { token: session, body: { code: '000000' } }))).toBe('400 two_factor_code_invalid');
    expect(await codeOf(await call(server, '/api/v3/user/two-factor/enrolment/confirm', { token: session, body: { code: 'not a code!' } }))).toBe('400 validation_error');
    // Not on yet: the password alone still signs in.
    expect(typeOf((await login(server, 'advanced')).token!)).toBe('login');
  });

  it('confirm: on, ten recovery codes shown once (only digests kept), an audit entry; sign-in then asks for a code', async () => {
    const { session, recovery } = await enrol('student01');
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    const kept = await server.ctx.db.select().from(schema.twoFactorRecoveryCodes).where(eq(schema.twoFactorRecoveryCodes.userId, (await userRow('student01')).id));
    expect(kept).toHaveLength(10);
    expect(JSON.stringify(kept)).not.toContain(recovery[0]!.replace('-', ''));
    const status = ZTwoFactorStatus.parse(await (await call(server, '/api/v3/user/two-factor', { token: session })).json());
    expect(status).toMatchObject({ enabled: true, pending: false, recovery_codes_left: 10 });
    expect(await auditOf('student01', 'two_factor.enable')).toHaveLength(1);
    expect(await codeOf(await call(server, '/api/v3/user/two-factor/enrolment', { token: session, method: 'POST' }))).toBe('409 two_factor_already_enabled');
  });
});

describe('sign-in with two-factor on', () => {
  let app: OTPAuth.TOTP;
  let recovery: string[];
  beforeAll(async () => {
    ({ app, recovery } = await enrol('student03'));
  }, SLOW);

  it('an original client’s form sign-in without a code gets the two-factor-required step token, not a session', async () => {
    const { res, token } = await login(server, 'student03');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(typeOf(token!)).toBe('two-factor-required');
    // The step token is no session.
    expect(await codeOf(await call(server, '/api/v3/user', { token }))).toMatch(/^401 /);
    // Continuing without a code: a description of what is missing.
    expect(await codeOf((await continueWith(token!)).res)).toBe('400 missing_required_data');
  });

  it('a code from the authenticator signs in; the same code again (replay) does not; one two steps away neither', async () => {
    const step1 = (await login(server, 'student03')).token!;
    const code = nextCode(app);
    const ok = await continueWith(step1, code);
    expect(ok.res.status, ok.res.ok ? '' : await ok.res.text()).toBe(200);
    expect(typeOf(ok.token!)).toBe('login');
    expect((await call(server, '/api/v3/user', { token: ok.token })).status).toBe(200);
    expect(await auditOf('student03', 'auth.sign_in')).not.toHaveLength(0);

    const step2 = (await login(server, 'student03')).token!;
    expect(await codeOf((await continueWith(step2, code)).res)).toBe('401 two_factor_code_invalid');
    expect(await codeOf((await continueWith(step2, app.generate({ timestamp: Date.now() + 3 * STEP }))).res)).toBe('401 two_factor_code_invalid');
    // A wrong code is a failed sign-in of that person in the log.
    expect((await auditOf('student03', 'auth.sign_in_failed')).some((e) => (e.detail as { reason?: string }).reason === 'two_factor_code_invalid')).toBe(true);
    // A step token is spent by its sign-in.
    await forgetLastStep('student03');
    expect(await codeOf((await continueWith(step1, app.generate())).res)).toBe('401 invalid_token');
  });

  it('a recovery code signs in once (any case, without the dash); then it is gone; its use is audited', async () => {
    const step = (await login(server, 'student03')).token!;
    const ok = await continueWith(step, recovery[0]!.toUpperCase().replace('-', ''));
    expect(ok.res.status, ok.res.ok ? '' : await ok.res.text()).toBe(200);
    expect(typeOf(ok.token!)).toBe('login');
    const used = await auditOf('student03', 'two_factor.recovery_code_used');
    expect(used).toHaveLength(1);
    expect(used[0]!.detail).toEqual({ left: 9 });
    const again = (await login(server, 'student03')).token!;
    expect(await codeOf((await continueWith(again, recovery[0]!)).res)).toBe('401 two_factor_code_invalid');
    expect((await continueWith(again, recovery[1]!)).res.status).toBe(200);
  });

  it('the steps after the code go on as usual (disclaimer)', async () => {
    await server.ctx.settings.set('disclaimer', { enabled: true, title: 'Rules', body: 'Be nice', texts: {} });
    try {
      await server.ctx.db.update(schema.users).set({ disclaimerAcknowledged: false }).where(eq(schema.users.id, (await userRow('student03')).id));
      await forgetLastStep('student03');
      const step = (await login(server, 'student03')).token!;
      const next = await continueWith(step, app.generate());
      expect(next.res.status).toBe(200);
      expect(typeOf(next.token!)).toBe('disclaimer-acknowledgement-required');
    } finally {
      await server.ctx.settings.set('disclaimer', { enabled: false, title: '', body: '', texts: {} });
    }
  });

  it('regenerating recovery codes needs a code; the old ones stop working; audited', async () => {
    await forgetLastStep('student03');
    const step = (await login(server, 'student03')).token!;
    const session = (await continueWith(step, recovery[2]!)).token!;
    expect(await codeOf(await call(server, '/api/v3/user/two-factor/recovery-codes', { token: session, body: { code: '123456' } }))).toBe('401 two_factor_code_invalid');
    const res = await call(server, '/api/v3/user/two-factor/recovery-codes', { token: session, body: { code: app.generate() } });
    expect(res.status, await res.clone().text()).toBe(200);
    const fresh = ZRecoveryCodes.parse(await res.json()).recovery_codes;
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(recovery[3]);
    expect(await auditOf('student03', 'two_factor.recovery_codes_regenerated')).toHaveLength(1);
    const next = (await login(server, 'student03')).token!;
    expect(await codeOf((await continueWith(next, recovery[3]!)).res)).toBe('401 two_factor_code_invalid');
    expect((await continueWith(next, fresh[0]!)).res.status).toBe(200);
  });

  it('turning it off needs a current code; then the password alone signs in; audited', async () => {
    const { app: app4, session } = await enrol('student04');
    expect(await codeOf(await call(server, '/api/v3/user/two-factor/disable', { token: session, body: { code: '000000' } }))).toBe('401 two_factor_code_invalid');
    const res = await call(server, '/api/v3/user/two-factor/disable', { token: session, body: { code: nextCode(app4) } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await codeOf(await call(server, '/api/v3/user/two-factor/disable', { token: session, body: { code: '000000' } }))).toBe('400 two_factor_not_enabled');
    expect(typeOf((await login(server, 'student04')).token!)).toBe('login');
    expect(await auditOf('student04', 'two_factor.disable')).toHaveLength(1);
  });

  it('brute force on codes: limited like passwords (429 with retry-after); the right code then waits too', async () => {
    const { app: brute } = await enrol('brute1');
    const from = { 'x-forwarded-for': '198.51.100.7' };
    const step = (await login(server, 'brute1', DEMO_PASSWORD, 'default', from)).token!;
    const wrong = String((Number(brute.generate()) + 1) % 1_000_000).padStart(6, '0');
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await continueWith(step, wrong, from)).res.status);
    expect(statuses).toEqual(Array(10).fill(401));
    const blocked = await continueWith(step, wrong, from);
    expect(blocked.res.status).toBe(429);
    const body = (await blocked.res.json()) as { description_code: string; params: { retry_after?: string } };
    expect(body.description_code).toBe('login_too_many_attempts');
    expect(body.params.retry_after).toBeDefined();
    expect(blocked.res.headers.get('retry-after')).toBeTruthy();
    expect((await continueWith(step, nextCode(brute), from)).res.status).toBe(429);
  }, SLOW);

  it('per person from any address: 10 wrong codes, then 429 from a new address too', async () => {
    const { app: brute } = await enrol('brute2');
    const wrong = String((Number(brute.generate()) + 7) % 1_000_000).padStart(6, '0');
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const from = { 'x-forwarded-for': `198.51.100.${100 + Math.floor(i / 5)}` };
      const step = (await login(server, 'brute2', DEMO_PASSWORD, 'default', from)).token!;
      statuses.push((await continueWith(step, wrong, from)).res.status);
    }
    expect(statuses).toEqual(Array(10).fill(401));
    const from = { 'x-forwarded-for': '198.51.100.200' };
    const step = (await login(server, 'brute2', DEMO_PASSWORD, 'default', from)).token!;
    const refused = await continueWith(step, nextCode(brute), from);
    expect(await codeOf(refused.res)).toBe('429 login_too_many_attempts');
    expect(refused.res.headers.get('retry-after')).toBeTruthy();
  }, SLOW);
});

describe('the console', () => {
  it('the users list shows who has two-factor', async () => {
    const res = await call(server, '/api/v3/admin/users?search=student01&per_page=10', { token: admin });
    const list = ZAdminUserList.parse(await res.json());
    expect(list.items.find((x) => x.username === 'student01')?.two_factor).toBe(true);
    const others = ZAdminUserList.parse(await (await call(server, '/api/v3/admin/users?search=manager', { token: admin })).json());
    expect(others.items.find((x) => x.username === 'manager')?.two_factor).toBe(false);
  });

  it('an admin or a manager (their category) resets a person’s second factor; audited; the password alone then signs in', async () => {
    await enrol('user');
    const id = (await userRow('user')).id;
    expect(typeOf((await login(server, 'user')).token!)).toBe('two-factor-required');
    const res = await call(server, `/api/v3/admin/users/${id}/two-factor`, { token: manager, method: 'DELETE' });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(typeOf((await login(server, 'user')).token!)).toBe('login');
    const reset = await auditOf('user', 'two_factor.reset');
    expect(reset).toHaveLength(1);
    expect(reset[0]!.actorName).toBe('manager');
    expect(await server.ctx.db.select().from(schema.twoFactorRecoveryCodes).where(eq(schema.twoFactorRecoveryCodes.userId, id))).toHaveLength(0);
  });

  it('a manager cannot reset an admin’s, nor anyone’s of another category', async () => {
    expect(await codeOf(await call(server, `/api/v3/admin/users/${(await userRow('admin')).id}/two-factor`, { token: manager, method: 'DELETE' }))).toBe('403 forbidden');
    expect(await codeOf(await call(server, `/api/v3/admin/users/${(await userRow('researcher')).id}/two-factor`, { token: manager, method: 'DELETE' }))).toBe('404 user_not_found');
  });
});

describe('required by the admin', () => {
  afterAll(async () => {
    await call(server, '/api/v3/admin/settings/two_factor', { token: admin, method: 'PUT', body: { required_roles: [], required_categories: [] } });
  });

  it('per category: people of it without two-factor are led to enrol at their next sign-in, then signed in', async () => {
    const put = await call(server, '/api/v3/admin/settings/two_factor', { token: admin, method: 'PUT', body: { required_categories: ['lab'] } });
    expect(put.status, await put.clone().text()).toBe(200);
    const changed = await server.ctx.db.select().from(schema.auditLog).where(and(eq(schema.auditLog.action, 'settings.update'), eq(schema.auditLog.objectId, 'two_factor')));
    expect(changed.at(-1)?.detail).toMatchObject({ required_categories: ['lab'], required_roles: [] });
    // Someone of another category is not concerned.
    expect(typeOf((await login(server, 'advanced')).token!)).toBe('login');

    const step = (await login(server, 'researcher', DEMO_PASSWORD, 'lab')).token!;
    expect(typeOf(step)).toBe('two-factor-enrolment-required');
    expect(await codeOf(await call(server, '/api/v3/user', { token: step }))).toMatch(/^401 /);
    // Not enrolled yet: continuing gives the step again.
    const again = await continueWith(step);
    expect(typeOf(again.token!)).toBe('two-factor-enrolment-required');

    const started = await call(server, '/authentication/two-factor/enrolment', { token: step, method: 'POST' });
    expect(started.status, await started.clone().text()).toBe(200);
    const app = appOf(ZTwoFactorEnrolment.parse(await started.json()));
    const confirmed = await call(server, '/authentication/two-factor/enrolment/confirm', { token: step, body: { code: app.generate() } });
    expect(confirmed.status, await confirmed.clone().text()).toBe(200);
    expect(ZRecoveryCodes.parse(await confirmed.json()).recovery_codes).toHaveLength(10);
    const done = await continueWith(step);
    expect(done.res.status).toBe(200);
    expect(typeOf(done.token!)).toBe('login');
    // Once: the step is spent.
    expect(await codeOf((await continueWith(step)).res)).toBe('401 invalid_token');
    // From now on a code is asked; it cannot be turned off while required.
    expect(typeOf((await login(server, 'researcher', DEMO_PASSWORD, 'lab')).token!)).toBe('two-factor-required');
    expect(await codeOf(await call(server, '/api/v3/user/two-factor/disable', { token: done.token, body: { code: nextCode(app) } }))).toBe('403 two_factor_required');
    const status = ZTwoFactorStatus.parse(await (await call(server, '/api/v3/user/two-factor', { token: done.token })).json());
    expect(status).toMatchObject({ enabled: true, required: true });
  });

  it('per role; an unknown category is refused with a catalogue code', async () => {
    expect(await codeOf(await call(server, '/api/v3/admin/settings/two_factor', { token: admin, method: 'PUT', body: { required_categories: ['nowhere'] } }))).toBe('400 category_not_found');
    expect(await codeOf(await call(server, '/api/v3/admin/settings/two_factor', { token: admin, method: 'PUT', body: { required_roles: ['boss'] } }))).toBe('400 validation_error');
    expect((await call(server, '/api/v3/admin/settings/two_factor', { token: admin, method: 'PUT', body: { required_categories: [], required_roles: ['manager'] } })).status).toBe(200);
    expect(typeOf((await login(server, 'manager')).token!)).toBe('two-factor-enrolment-required');
    expect(typeOf((await login(server, 'advanced')).token!)).toBe('login');
    // Only admins set it.
    expect(await codeOf(await call(server, '/api/v3/admin/settings/two_factor', { token: manager, method: 'PUT', body: { required_roles: [] } }))).toBe('403 forbidden');
  });

  it('a step token of another kind does not reach the enrolment, nor does a session', async () => {
    const session = await loginToken(server, 'advanced');
    expect(await codeOf(await call(server, '/authentication/two-factor/enrolment', { token: session, method: 'POST' }))).toBe('401 invalid_token');
    expect(await codeOf(await call(server, '/authentication/two-factor/enrolment', { method: 'POST' }))).toBe('401 missing_token');
  });
});

describe('secrets', () => {
  it('no secret or recovery code (shown, typed or used) in any log line', async () => {
    const { enrolment, recovery } = await enrol('manager');
    const step = (await login(server, 'manager')).token!;
    expect((await continueWith(step, recovery[4]!)).res.status).toBe(200);
    const text = logged.join('\n');
    expect(text).not.toContain(enrolment.secret);
    expect(shown.length).toBeGreaterThan(50);
    for (const s of shown) {
      expect(text).not.toContain(s);
      expect(text).not.toContain(s.replace('-', ''));
    }
  });
});

describe('a secret sealed under another key', () => {
  it('codes of it are refused (never a 5xx); recovery codes still sign in', async () => {
    const { app, recovery } = await enrol('rekeyed');
    // As after a change of the server's SECRET: the stored secret no longer opens.
    const { sealSecret } = await import('../../src/auth/secret-box');
    await server.ctx.db.update(schema.users).set({ totpSecret: sealSecret('another server key', 'JBSWY3DPEHPK3PXP') }).where(eq(schema.users.id, (await userRow('rekeyed')).id));
    const step = (await login(server, 'rekeyed')).token!;
    expect(await codeOf((await continueWith(step, nextCode(app))).res)).toBe('401 two_factor_code_invalid');
    expect((await continueWith(step, recovery[0]!)).res.status).toBe(200);
  });
});

import { and, eq, ne } from 'drizzle-orm';
import { expect } from 'vitest';
import { schema } from '../../src/db';
import { newApiToken } from '../../src/auth/api-tokens';
import { scaled } from './slowdown';
import { DEMO_PASSWORD } from './server';
import {
  bookingDate,
  copyUser,
  fillPath,
  makeBinEntry,
  makeBooking,
  makeDeployment,
  makeDesktop,
  makeMedia,
  makeTemplate,
  tokenOf,
  userRow,
  type FixtureServer,
} from './routes-fixtures';

// The authorisation matrix (issue 9): every registered route × every kind of caller — nobody
// signed in, each role, the object's owner, another user of the same category, a user of another
// category, and a deployment's co-owner — with the outcome class each must get. The table is keyed
// by "METHOD url" as the app registers it: a new route without a row here fails this suite.
//
// Objects are made cheaply (rows and thin overlays, no download); no machine is started: the
// desktops the lifecycle routes act on are marked `Starting`, so an allowed start or stop is
// refused for its state (409), after the rights were checked.
//
// One table and one set of checks, run by server/test/api/authorization-matrix.test.ts against one
// in-process server and by server/test/processes/matrix-balancer.test.ts through HAProxy in front of
// three server processes: `prepareMatrix` makes the callers and objects through the target's URL and
// database, then `runCase`, `listLeaks` judge the answers.

/** Where the matrix runs: the URL people use, and the installation's database and disks (for the fixtures). */
export type MatrixTarget = FixtureServer;

/** The servers' environment the matrix needs (no floor delay on unknown direct links, the bastion's files, a public address). */
export const MATRIX_ENV = { DIRECT_VIEWER_DELAY_MS: '0', BASTION_SSH_PORT: '0', BASTION_HOST: '127.0.0.1', PUBLIC_URL: 'http://portal.test', METRICS_TOKEN: 'matrix-monitoring-token-0123456789' };

export type Caller = 'anon' | 'admin' | 'manager' | 'advanced' | 'user' | 'student' | 'researcher' | 'coowner';
export const CALLERS: Caller[] = ['anon', 'admin', 'manager', 'advanced', 'user', 'student', 'researcher', 'coowner'];
export const SIGNED = CALLERS.filter((c) => c !== 'anon');
// Who is who (all of category Default except `researcher`):
//   admin, manager: the demo's; advanced: a teacher, owner of the template, media and deployment;
//   user: owner of a plain desktop, a bin entry and a booking; student (student01): the student of
//   the deployment, owner of its desktop; coowner: another teacher, co-owner of the deployment;
//   researcher: an advanced user of the category "Research Lab".

/**
 * ok: 2xx. reached: the rights were granted and the call refused for another reason or done
 * (not 401/403/404, not 5xx). passes: not 401/403, not 5xx (a 404 that means "nothing to show").
 * denied: 401/403/404 with a description_code (nobody signed in: 401).
 */
export type Outcome = 'ok' | 'reached' | 'passes' | 'denied';
export type Req = { path: string; method?: string; body?: unknown; form?: Record<string, string> };
type Case = {
  expect: Partial<Record<Caller, Outcome>>; // a caller not named is denied
  req: (c: Caller) => Req | Promise<Req>;
  /** Destroys its object: each allowed caller gets a fresh one from req(), one at a time, after the denied callers. */
  fresh?: boolean;
  /** Run after every other route (it ends or changes the callers' sessions, or empties their bin). */
  late?: boolean;
  /**
   * What nobody signed in gets instead of 401: the direct viewer's public lookup answers its slow 404, and the
   * admin app's sign-in sends a browser to the portal's sign-in page (302, as the original; no body).
   */
  anonStatus?: number;
};

const allow = (callers: Caller[], o: Outcome = 'ok'): Partial<Record<Caller, Outcome>> => Object.fromEntries(callers.map((c) => [c, o]));
const PUBLIC = (o: Outcome = 'ok') => allow(CALLERS, o);
const SIGNED_IN = (o: Outcome = 'ok') => allow(SIGNED, o);
const PRIVILEGED: Caller[] = ['admin', 'manager', 'advanced', 'researcher', 'coowner']; // templates, media, deployments
/** The deployment's desktop (its student's): the student, the deployment's owner and co-owner, admin, manager of the category. */
const DEP_DESKTOP: Caller[] = ['admin', 'manager', 'advanced', 'coowner', 'student'];
/**
 * Editing a deployment's desktop one by one (hardware, cover, disk): its student as far as the
 * deployment lets them, admin and manager; the deployment's owners edit the deployment instead.
 */
const DEP_DESKTOP_DOMAIN: Caller[] = ['admin', 'manager', 'student'];
/** The deployment: owner, co-owner, admin, manager of the category (co-owners neither delete nor change owners). */
const DEP_EDIT: Caller[] = ['admin', 'manager', 'advanced', 'coowner'];
const DEP_OWNER: Caller[] = ['admin', 'manager', 'advanced'];
/** `advanced`'s template and media: owner, admin, manager of the category. */
const ADV_OWNED: Caller[] = ['admin', 'manager', 'advanced'];
/** `user`'s desktop, bin entry and booking: owner, admin, manager of the category. */
const USER_OWNED: Caller[] = ['admin', 'manager', 'user'];

let server: MatrixTarget;
const tokens = {} as Record<Caller, string | undefined>;
const ids = {} as Record<Caller, string>;

/** A backup job marked running (a row, no work): the matrix's backup calls find one busy. */
const MATRIX_BACKUP_JOB = 'job-matrix-backup';
async function matrixBackupJob(): Promise<string> {
  await server.ctx.db
    .insert(schema.jobs)
    .values({ id: MATRIX_BACKUP_JOB, kind: 'backup', status: 'running', userId: ids.admin, targetId: ids.admin, progress: 10 })
    .onConflictDoNothing();
  return MATRIX_BACKUP_JOB;
}
/** The fixtures, made in beforeAll. */
const F = {} as {
  dep: string; depDesktop: string; depDisk: string; userDesktop: string; gpuDesktop: string; advDesktop: string;
  template: string; gpuTemplate: string; media: string; bin: string; booking: string; card: string; labDep: string; pool: string;
};
/** A desktop pool of advanced's template for Students 1A, disabled (nothing is prepared, a take is refused past the rights). */
async function poolFixture(): Promise<string> {
  const res = await send({ path: '/api/v3/desktop-pools', method: 'POST', body: poolBody('Matrix pool') }, tokens.advanced);
  if (res.status !== 200) throw new Error(`pool fixture: ${res.status} ${res.text}`);
  return (JSON.parse(res.text) as { id: string }).id;
}
const poolBody = (name: string) => ({ name, template_id: F.template, allowed: { groups: ['default-students-1a'] }, max_desktops: 1, prepared: 0, enabled: false });
const bookingSlot = (hours: number) => {
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + hours * 3_600_000);
  return { start: bookingDate(start), end: bookingDate(new Date(start.getTime() + 30 * 60_000)) };
};
const rangeQuery = `startDate=${encodeURIComponent(bookingDate(new Date(Date.now() - 86_400_000)))}&endDate=${encodeURIComponent(bookingDate(new Date(Date.now() + 7 * 86_400_000)))}`;
const uniq = (c: Caller, what: string) => `${what} ${c} ${Math.random().toString(36).slice(2, 7)}`;

const get = (path: string) => () => ({ path });
/** Objects a destroying call gets one of each time (made as an admin would, straight in the database). */
const peopleFixture = {
  async user() {
    const row = await copyUser(server, { username: 'student02' }, `gone-${Math.random().toString(36).slice(2, 8)}`);
    return row.id;
  },
  async group() {
    const id = `g-${Math.random().toString(36).slice(2, 10)}`;
    await server.ctx.db.insert(schema.groups).values({ id, uid: id, name: id, categoryId: 'default' });
    return id;
  },
  async category() {
    const id = `c-${Math.random().toString(36).slice(2, 10)}`;
    await server.ctx.db.insert(schema.categories).values({ id, name: id, customUrlName: id });
    return id;
  },
  async code() {
    const code = `code-${Math.random().toString(36).slice(2, 12)}`;
    await server.ctx.db.insert(schema.registrationCodes).values({ code, categoryId: 'default', groupId: 'default-students-1a', roleId: 'user' });
    return code;
  },
};
/** A personal API token of a user (straight in the database): its id. */
async function apiTokenFixture(userId: string) {
  const made = newApiToken();
  await server.ctx.db.insert(schema.apiTokens).values({ id: made.id, userId, name: `matrix ${made.id}`, secretHash: made.secretHash, readOnly: true });
  return made.id;
}
/** A directory (straight in the database): its id. */
async function identityProviderFixture() {
  const id = `idp-${Math.random().toString(36).slice(2, 10)}`;
  await server.ctx.db.insert(schema.identityProviders).values({
    id, kind: 'ldap', name: id, categoryId: 'default', enabled: false,
    settings: { url: 'ldap://127.0.0.1:1', start_tls: false, ca: '', bind_dn: '', user_base: 'dc=test', user_filter: '(uid={username})', group_base: '', group_filter: '(member={dn})', attributes: { username: 'uid', name: 'cn', email: 'mail', photo: '', groups: 'memberOf' } },
  });
  return id;
}
const identityBody = (c: Caller) => ({
  kind: 'ldap', name: `matrix ${c}`, category_id: 'default', enabled: false,
  settings: { url: 'ldap://127.0.0.1:1', user_base: 'dc=test' },
});
/** The console's GPU cards (with a profile of their own), booking rules and auto-shutdown policies, straight in the database. */
const reserveFixture = {
  async card(withProfile = false) {
    const id = `card-${Math.random().toString(36).slice(2, 10)}`;
    const profile = `MX-${id}`;
    if (withProfile) await server.ctx.db.insert(schema.reservableSubitems).values({ id: profile, name: profile, profile: 'MX', units: 2 });
    await server.ctx.db.insert(schema.reservableItems).values({ id, name: id, subitemIds: withProfile ? [profile] : [] });
    return { id, profile };
  },
  async rule() {
    const id = `rule-${Math.random().toString(36).slice(2, 10)}`;
    await server.ctx.db.insert(schema.bookingPriorities).values({ id, ruleId: 'default', name: id, allowed: { roles: ['user'], categories: false, groups: false, users: false }, priority: 5 });
    return id;
  },
  /** A policy for a new group of Default (what its manager reaches). */
  async policy() {
    const group = await peopleFixture.group();
    const id = `policy-${group}`;
    await server.ctx.db.insert(schema.shutdownPolicies).values({ id, name: id, kind: 'group', targetId: group, categoryId: 'default', maxTime: 60 });
    return id;
  },
};
const A = '/api/v3';

export const MATRIX: Record<string, Case> = {
  // ------------------------------------------------------------------ authentication service
  'POST /authentication/login': { expect: PUBLIC(), req: () => ({ path: '/authentication/login?provider=form&category_id=default', method: 'POST', form: { username: 'student02', password: DEMO_PASSWORD } }) },
  'POST /authentication/renew': { expect: SIGNED_IN(), late: true, req: () => ({ path: '/authentication/renew', method: 'POST' }) },
  'POST /authentication/logout': { expect: SIGNED_IN(), late: true, req: () => ({ path: '/authentication/logout', method: 'POST' }) },
  'GET /authentication/providers': { expect: PUBLIC(), req: get('/authentication/providers') },
  'POST /authentication/signup': {
    expect: PUBLIC('reached'),
    req: (c) => ({ path: '/authentication/signup', method: 'POST', body: { category_id: 'default', username: `signup-${c}`, name: 'Sign Up', email: `signup-${c}@example.org`, password: 'Long-enough-9' } }),
  },
  // Step tokens only: a session token is no disclaimer, reset, verification or registration token.
  'POST /authentication/acknowledge-disclaimer': { expect: {}, req: () => ({ path: '/authentication/acknowledge-disclaimer', method: 'POST' }) },
  'POST /authentication/forgot-password': { expect: PUBLIC('reached'), req: () => ({ path: '/authentication/forgot-password', method: 'POST', body: { category_id: 'default', email: 'nobody@example.org' } }) },
  'POST /authentication/reset-password': { expect: {}, req: () => ({ path: '/authentication/reset-password', method: 'POST', body: { password: 'Another-pass-9' } }) },
  // A session token may ask too (a signed-in person changing their address); mail is off here (428).
  'POST /authentication/request-email-verification': { expect: SIGNED_IN('reached'), req: () => ({ path: '/authentication/request-email-verification', method: 'POST', body: { email: 'someone@example.org' } }) },
  'POST /authentication/verify-email': { expect: {}, req: () => ({ path: '/authentication/verify-email', method: 'POST' }) },
  'GET /authentication/categories': { expect: PUBLIC(), req: get('/authentication/categories') },

  // ------------------------------------------------------------------ user and system
  'GET /api/v3/user': { expect: SIGNED_IN(), req: get(`${A}/user`) },
  'GET /api/v3/user/config': { expect: SIGNED_IN(), req: get(`${A}/user/config`) },
  // Personal API tokens: each person their own (a session only); the console's list as its people lists.
  'GET /api/v3/user/api-tokens': { expect: SIGNED_IN(), req: get(`${A}/user/api-tokens`) },
  'POST /api/v3/user/api-tokens': { expect: SIGNED_IN(), req: (c) => ({ path: `${A}/user/api-tokens`, method: 'POST', body: { name: `matrix ${c}`, scope: 'read', expires: null } }) },
  'DELETE /api/v3/user/api-tokens/:id': {
    expect: SIGNED_IN(), fresh: true, req: async (c) => ({ path: `${A}/user/api-tokens/${await apiTokenFixture(ids[c === 'anon' ? 'user' : c])}`, method: 'DELETE' }),
  },
  // Two-factor sign-in: each person their own (a session only); the console's reset as its people actions.
  'GET /api/v3/user/two-factor': { expect: SIGNED_IN(), req: get(`${A}/user/two-factor`) },
  'POST /api/v3/user/two-factor/enrolment': { expect: SIGNED_IN(), req: () => ({ path: `${A}/user/two-factor/enrolment`, method: 'POST' }) },
  'POST /api/v3/user/two-factor/enrolment/confirm': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user/two-factor/enrolment/confirm`, method: 'POST', body: { code: '000000' } }) },
  'POST /api/v3/user/two-factor/recovery-codes': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user/two-factor/recovery-codes`, method: 'POST', body: { code: '000000' } }) },
  'POST /api/v3/user/two-factor/disable': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user/two-factor/disable`, method: 'POST', body: { code: '000000' } }) },
  'DELETE /api/v3/admin/users/:id/two-factor': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/users/${(await userRow(server, 'student02')).id}/two-factor`, method: 'DELETE' }) },
  // The enrolment a sign-in leads to: its step token only (a session's token is refused).
  'POST /authentication/two-factor/enrolment': { expect: {}, req: () => ({ path: '/authentication/two-factor/enrolment', method: 'POST' }) },
  'POST /authentication/two-factor/enrolment/confirm': { expect: {}, req: () => ({ path: '/authentication/two-factor/enrolment/confirm', method: 'POST', body: { code: '000000' } }) },
  'GET /api/v3/admin/identity-providers': { expect: allow(['admin']), req: get(`${A}/admin/identity-providers`) },
  'POST /api/v3/admin/identity-providers': { expect: allow(['admin']), req: (c) => ({ path: `${A}/admin/identity-providers`, method: 'POST', body: identityBody(c) }) },
  'PUT /api/v3/admin/identity-providers/:id': { expect: allow(['admin']), req: async (c) => ({ path: `${A}/admin/identity-providers/${await identityProviderFixture()}`, method: 'PUT', body: identityBody(c) }) },
  'DELETE /api/v3/admin/identity-providers/:id': { expect: allow(['admin']), fresh: true, req: async () => ({ path: `${A}/admin/identity-providers/${await identityProviderFixture()}`, method: 'DELETE' }) },
  // Without a password: the directory is not asked (400), nobody but an admin gets that far.
  'POST /api/v3/admin/identity-providers/:id/test': { expect: allow(['admin'], 'reached'), req: async () => ({ path: `${A}/admin/identity-providers/${await identityProviderFixture()}/test`, method: 'POST', body: { username: 'x' } }) },
  'GET /api/v3/admin/identity-providers/previews/:id': { expect: allow(['admin'], 'passes'), req: get(`${A}/admin/identity-providers/previews/none`) },
  'GET /authentication/login': { expect: PUBLIC('reached'), req: get('/authentication/login?provider=saml&provider_id=none') },
  // The provider's return: an unknown provider or state goes back to the sign-in page (303), for anyone.
  'GET /authentication/oidc/callback/:id': { expect: PUBLIC('reached'), req: get('/authentication/oidc/callback/none?state=none&code=none') },
  // SAML (the IdP and the browser call these): our SP metadata (404 for an unknown provider), the original's start,
  // the ACS and the single logout (a browser is sent on: 303).
  'GET /authentication/saml/metadata/:id': { expect: PUBLIC('passes'), req: get('/authentication/saml/metadata/none') },
  'GET /authentication/saml/metadata': { expect: PUBLIC('passes'), req: get('/authentication/saml/metadata') },
  'GET /authentication/saml/login': { expect: PUBLIC('reached'), req: get('/authentication/saml/login') },
  'POST /authentication/saml/acs/:id': { expect: PUBLIC('reached'), req: () => ({ path: '/authentication/saml/acs/none', method: 'POST', body: { SAMLResponse: 'eA==' } }) },
  'GET /authentication/saml/slo/:id': { expect: PUBLIC('reached'), req: get('/authentication/saml/slo/none?SAMLResponse=eA') },
  'POST /authentication/saml/slo/:id': { expect: PUBLIC('reached'), req: () => ({ path: '/authentication/saml/slo/none', method: 'POST', body: { SAMLResponse: 'eA==' } }) },
  'GET /api/v3/admin/api-tokens': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/api-tokens`) },
  'DELETE /api/v3/admin/api-tokens/:id': { expect: allow(['admin', 'manager']), fresh: true, req: async () => ({ path: `${A}/admin/api-tokens/${await apiTokenFixture(ids.user)}`, method: 'DELETE' }) },
  'GET /api/v3/openapi.json': { expect: PUBLIC(), req: get(`${A}/openapi.json`) },
  'GET /api/v3/user/appliedquota': { expect: SIGNED_IN(), req: get(`${A}/user/appliedquota`) },
  'PUT /api/v3/user': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user`, method: 'PUT', body: { current_password: 'not-the-password', password: 'Another-pass-9' } }) },
  'POST /api/v3/user_migration/export': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user_migration/export`, method: 'POST' }) },
  'POST /api/v3/user_migration/import': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user_migration/import`, method: 'POST', body: { token: 'not-a-code' } }) },
  'GET /api/v3/user_migration/result': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user_migration/result` }) },
  'GET /api/v3/message-template/:name': { expect: SIGNED_IN(), req: get(`${A}/message-template/booking-end`) },
  'GET /api/v3/user/sign-in-desktop': { expect: SIGNED_IN(), req: get(`${A}/user/sign-in-desktop`) },
  'PUT /api/v3/user/sign-in-desktop': { expect: SIGNED_IN(), req: () => ({ path: `${A}/user/sign-in-desktop`, method: 'PUT', body: { open: 'group' } }) },
  'PUT /api/v3/user/language/:lang': { expect: SIGNED_IN(), req: () => ({ path: `${A}/user/language/en`, method: 'PUT' }) },
  'GET /api/v3/user/password-policy': { expect: SIGNED_IN(), req: get(`${A}/user/password-policy`) },
  'GET /api/v3/user/expired/password-policy': { expect: SIGNED_IN(), req: get(`${A}/user/expired/password-policy`) },
  'POST /api/v3/user/register': { expect: {}, req: () => ({ path: `${A}/user/register`, method: 'POST', body: { code: 'not-a-code' } }) },
  'GET /api/v3/maintenance': { expect: PUBLIC(), req: get(`${A}/maintenance`) },
  'GET /api/v3/maintenance/text/frontend': { expect: PUBLIC(), req: get(`${A}/maintenance/text/frontend`) },
  'GET /api/v3/check': { expect: PUBLIC(), req: get(`${A}/check`) },
  // A load balancer's health check (no session): 503 only while the process stops.
  'GET /api/v3/health': { expect: PUBLIC(), req: get(`${A}/health`) },
  // Only the monitoring token (or an allowed address) scrapes: no session of any role does.
  'GET /metrics': { expect: {}, req: get('/metrics') },
  'GET /api/v3/notifications/status_bar': { expect: SIGNED_IN(), req: get(`${A}/notifications/status_bar`) },
  'GET /api/v3/authentication/export/:provider': { expect: SIGNED_IN(), req: get(`${A}/authentication/export/local`) },
  'GET /api/v3/authentication/import/:provider': { expect: SIGNED_IN(), req: get(`${A}/authentication/import/local`) },
  'GET /api/v3/notification/user/:trigger/:display': { expect: SIGNED_IN(), req: get(`${A}/notification/user/start_desktop/modal`) },
  'GET /api/v3/notification/user/displays/:trigger': { expect: SIGNED_IN(), req: get(`${A}/notification/user/displays/start_desktop`) },
  // The admin app's session, opened from a portal session of an admin or manager (nobody signed in: to the sign-in page).
  'POST /isard-admin/login': { expect: allow(['admin', 'manager']), anonStatus: 302, req: () => ({ path: '/isard-admin/login', method: 'POST' }) },
  'GET /isard-admin/login': { expect: allow(['admin', 'manager']), anonStatus: 302, req: () => ({ path: '/isard-admin/login' }) },
  'GET /isard-admin/logout/remote': { expect: PUBLIC(), req: get('/isard-admin/logout/remote') },
  'GET /api/v3/categories': { expect: PUBLIC(), req: get(`${A}/categories`) },
  'GET /api/v3/category/:id': { expect: PUBLIC(), req: get(`${A}/category/default`) },
  'GET /api/v3/login_config': { expect: PUBLIC(), req: get(`${A}/login_config`) },
  'GET /api/v3/disclaimer': { expect: PUBLIC(), req: get(`${A}/disclaimer`) },

  // ------------------------------------------------------------------ administration
  'GET /api/v3/admin/settings/:key': { expect: allow(['admin']), req: get(`${A}/admin/settings/frontend`) },
  'PUT /api/v3/admin/settings/:key': { expect: allow(['admin'], 'reached'), req: () => ({ path: `${A}/admin/settings/status_bar`, method: 'PUT', body: { enabled: false } }) },
  'PUT /api/v3/admin/category/:id/maintenance': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/category/lab/maintenance`, method: 'PUT', body: { enabled: false } }) },
  'PUT /api/v3/admin/user/:id/active': { expect: allow(['admin']), req: async () => ({ path: `${A}/admin/user/${(await userRow(server, 'student02')).id}/active`, method: 'PUT', body: { active: true } }) },
  'POST /api/v3/admin/settings/mail/test': { expect: allow(['admin'], 'reached'), req: () => ({ path: `${A}/admin/settings/mail/test`, method: 'POST', body: { to: 'someone@example.org' } }) },
  // Admins every entry, managers their category's (the filter is tested in admin-system.test.ts).
  'GET /api/v3/admin/audit': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/audit`) },
  'GET /api/v3/admin/audit/export': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/audit/export`) },
  // The console's people calls: admins everywhere, managers within their category (the other category's rows: admin-people.test.ts).
  'GET /api/v3/admin/registration_codes': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/registration_codes`) },
  'POST /api/v3/admin/registration_codes': { expect: allow(['admin', 'manager']), req: () => ({ path: `${A}/admin/registration_codes`, method: 'POST', body: { group: 'default-students-1a', role: 'user' } }) },
  'PUT /api/v3/admin/registration_codes/:code/reset': { expect: allow(['admin', 'manager']), fresh: true, req: async () => ({ path: `${A}/admin/registration_codes/${await peopleFixture.code()}/reset`, method: 'PUT' }) },
  'DELETE /api/v3/admin/registration_codes/:code': { expect: allow(['admin', 'manager']), fresh: true, req: async () => ({ path: `${A}/admin/registration_codes/${await peopleFixture.code()}`, method: 'DELETE' }) },
  'GET /api/v3/admin/users': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/users`) },
  'GET /api/v3/admin/users/export': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/users/export`) },
  'GET /api/v3/admin/users/:id': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/users/${(await userRow(server, 'student02')).id}` }) },
  'POST /api/v3/admin/users': {
    expect: allow(['admin', 'manager']),
    req: (c) => ({ path: `${A}/admin/users`, method: 'POST', body: { username: uniq(c, 'new').replaceAll(' ', '-'), name: 'New person', role: 'user', group: 'default-students-1a', password: 'Long-enough-9' } }),
  },
  'PUT /api/v3/admin/users/:id': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/users/${(await userRow(server, 'student02')).id}`, method: 'PUT', body: { name: 'Student 02' } }) },
  'DELETE /api/v3/admin/users/:id': { expect: allow(['admin', 'manager']), fresh: true, req: async () => ({ path: `${A}/admin/users/${await peopleFixture.user()}`, method: 'DELETE' }) },
  // Mail is off on this server: a permitted call reaches the rule and answers 428 email_not_configured.
  'POST /api/v3/admin/users/:id/reset-mail': { expect: allow(['admin', 'manager'], 'reached'), req: async () => ({ path: `${A}/admin/users/${(await userRow(server, 'student02')).id}/reset-mail`, method: 'POST' }) },
  'POST /api/v3/admin/users/password-reset': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/users/password-reset`, method: 'POST', body: { ids: [await peopleFixture.user()] } }) },
  'POST /api/v3/admin/users/credentials-sheet': {
    expect: allow(['admin', 'manager']),
    req: () => ({
      path: `${A}/admin/users/credentials-sheet`, method: 'POST',
      body: { format: 'csv', rows: [{ name: 'Ada', username: 'ada', password: 'k7Pm-x3Ta-9aRw', organisation: 'Default' }], labels: { title: 't', name: 'n', username: 'u', password: 'p', address: 'a', organisation: 'o', change_hint: 'h' } },
    }),
  },
  'POST /api/v3/admin/users/bulk': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/users/bulk`, method: 'POST', body: { ids: [(await userRow(server, 'student02')).id], action: 'enable' } }) },
  // A JSON string is no CSV header: refused for its content (400) once the rights were granted.
  'POST /api/v3/admin/users/import': { expect: allow(['admin', 'manager'], 'reached'), req: () => ({ path: `${A}/admin/users/import?dry_run=true`, method: 'POST', body: 'not,a,header' }) },
  'GET /api/v3/admin/groups': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/groups`) },
  'GET /api/v3/admin/groups/:id': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/groups/default-students-1a`) },
  'POST /api/v3/admin/groups': { expect: allow(['admin', 'manager']), req: (c) => ({ path: `${A}/admin/groups`, method: 'POST', body: { name: uniq(c, 'Group') } }) },
  'PUT /api/v3/admin/groups/:id': { expect: allow(['admin', 'manager']), req: () => ({ path: `${A}/admin/groups/default-students-1a`, method: 'PUT', body: { description: 'First year, class A' } }) },
  'DELETE /api/v3/admin/groups/:id': { expect: allow(['admin', 'manager']), fresh: true, req: async () => ({ path: `${A}/admin/groups/${await peopleFixture.group()}`, method: 'DELETE' }) },
  'GET /api/v3/admin/categories': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/categories`) },
  'GET /api/v3/admin/categories/:id': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/categories/default`) },
  'POST /api/v3/admin/categories': {
    expect: allow(['admin']),
    req: (c) => ({ path: `${A}/admin/categories`, method: 'POST', body: { name: uniq(c, 'Category'), custom_url_name: uniq(c, 'cat').replaceAll(' ', '-') } }),
  },
  'PUT /api/v3/admin/categories/:id': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/categories/lab`, method: 'PUT', body: { description: 'A second organisation, with its own users' } }) },
  'DELETE /api/v3/admin/categories/:id': { expect: allow(['admin']), fresh: true, req: async () => ({ path: `${A}/admin/categories/${await peopleFixture.category()}`, method: 'DELETE' }) },
  'GET /api/v3/admin/storage_pool/availability': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/storage_pool/availability`) },
  // The console's infrastructure (issue 13): managers their category's storage, jobs and numbers; hypervisors admins only.
  'GET /api/v3/admin/storage': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/storage?search=qcow2`) },
  'GET /api/v3/admin/storage/check': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/storage/check`) },
  'POST /api/v3/admin/storage/check/remove': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/storage/check/remove`, method: 'POST', body: { paths: ['desktops/not-an-orphan.qcow2'] } }) },
  'GET /api/v3/admin/storage/pools': { expect: allow(['admin']), req: get(`${A}/admin/storage/pools`) },
  'GET /api/v3/admin/jobs': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/jobs`) },
  // A finished job of the category (its media's): the cancel is reached and refused (409 job_not_active).
  'DELETE /api/v3/admin/jobs/:id': {
    expect: allow(['admin', 'manager'], 'reached'),
    req: async () => {
      const id = `job-${Math.random().toString(36).slice(2, 10)}`;
      await server.ctx.db.insert(schema.jobs).values({ id, kind: 'media_download', status: 'done', userId: ids.advanced, targetId: F.media, progress: 100 });
      return { path: `${A}/admin/jobs/${id}`, method: 'DELETE' };
    },
  },
  // A finished CSV import of the caller's own: readable by its initiator (an admin: anyone's).
  'GET /api/v3/admin/users/import/:id': {
    expect: allow(['admin', 'manager']),
    req: async (c) => {
      const id = `job-${Math.random().toString(36).slice(2, 10)}`;
      await server.ctx.db.insert(schema.jobs).values({ id, kind: 'user_import', status: 'done', userId: ids[c] ?? ids.manager, targetId: ids[c] ?? ids.manager, progress: 100 });
      return { path: `${A}/admin/users/import/${id}` };
    },
  },
  'GET /api/v3/admin/hypervisors': { expect: allow(['admin']), req: get(`${A}/admin/hypervisors`) },
  'PUT /api/v3/admin/hypervisors/:id': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/hypervisors/local`, method: 'PUT', body: { enabled: true, only_forced: false } }) },
  // Many hosts (issue 25): the local engine reaches no other host, so adding one is refused (428) after the rights.
  'GET /api/v3/admin/hypervisors/ssh-key': { expect: allow(['admin']), req: get(`${A}/admin/hypervisors/ssh-key`) },
  'POST /api/v3/admin/hypervisors': { expect: allow(['admin'], 'reached'), req: () => ({ path: `${A}/admin/hypervisors`, method: 'POST', body: { uri: 'qemu+ssh://vdi@192.0.2.1/system' } }) },
  'PUT /api/v3/admin/hypervisors/:id/drain': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/hypervisors/local/drain`, method: 'PUT', body: { draining: false } }) },
  'POST /api/v3/admin/hypervisors/tls-certificate': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/hypervisors/tls-certificate`, method: 'POST', body: { host: 'hv-matrix.example' } }) },
  'POST /api/v3/admin/hypervisors/:id/down': { expect: allow(['admin'], 'reached'), req: () => ({ path: `${A}/admin/hypervisors/local/down`, method: 'POST' }) },
  'GET /api/v3/admin/hypervisors/preferred/:kind/:id': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/hypervisors/preferred/template/${F.template}`, method: 'GET' }) },
  'PUT /api/v3/admin/hypervisors/preferred/:kind/:id': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/hypervisors/preferred/template/${F.template}`, method: 'PUT', body: { forced_hyp: [], favourite_hyp: ['local'] } }) },
  'DELETE /api/v3/admin/hypervisors/:id': { expect: allow(['admin'], 'reached'), req: () => ({ path: `${A}/admin/hypervisors/local`, method: 'DELETE' }) },
  'GET /api/v3/admin/dashboard': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/dashboard`) },
  // Backups (issue 29): admins only. A backup job "running" (a row) makes the start reached and refused (409 backup_running).
  'GET /api/v3/admin/backups': { expect: allow(['admin']), req: get(`${A}/admin/backups`) },
  'POST /api/v3/admin/backups': {
    expect: allow(['admin'], 'reached'),
    req: async () => {
      await matrixBackupJob();
      return { path: `${A}/admin/backups`, method: 'POST', body: {} };
    },
  },
  'GET /api/v3/admin/backups/job/:id': {
    expect: allow(['admin']),
    req: async () => ({ path: `${A}/admin/backups/job/${await matrixBackupJob()}` }),
  },
  'GET /api/v3/admin/backups/file/:name': { expect: allow(['admin'], 'passes'), req: get(`${A}/admin/backups/file/backup-none.tar.gz`) },
  'GET /api/v3/admin/dashboard/history': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/dashboard/history?range=day`) },
  'GET /api/v3/admin/reports/usage': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/reports/usage?from=2026-01-01&to=2026-01-31`) },
  'GET /api/v3/admin/reports/usage/csv': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/reports/usage/csv?from=2026-01-01&to=2026-01-31&part=sign_ins`) },
  // The console's desktops, templates, media and deployments across owners (issue 13): admins everywhere, managers in their
  // category (another category's objects: not found, admin-desktops.test.ts). Actions answer per id inside a 200.
  'GET /api/v3/admin/desktops': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/desktops?search=a`) },
  'POST /api/v3/admin/desktops/:action': { expect: allow(['admin', 'manager']), req: () => ({ path: `${A}/admin/desktops/stop`, method: 'POST', body: { ids: [F.userDesktop] } }) },
  // A desktop that is not running has no screen (428 viewer_not_started) once the rights were granted.
  'GET /api/v3/admin/desktops/:id/viewer/:viewer': { expect: allow(['admin', 'manager'], 'reached'), req: () => ({ path: `${A}/admin/desktops/${F.userDesktop}/viewer/browser-vnc` }) },
  // One desktop's page (issue 28): its facts, its history; its screen answers 404 while it does not run (once the rights were granted).
  'GET /api/v3/admin/desktops/:id': { expect: allow(['admin', 'manager']), req: () => ({ path: `${A}/admin/desktops/${F.userDesktop}` }) },
  // Given to its own owner: nothing changes (200) once the rights were granted.
  'PUT /api/v3/admin/desktops/:id': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/desktops/${F.userDesktop}`, method: 'PUT', body: { owner_id: (await userRow(server, 'user')).id } }) },
  'GET /api/v3/admin/desktops/:id/history': { expect: allow(['admin', 'manager']), req: () => ({ path: `${A}/admin/desktops/${F.userDesktop}/history` }) },
  'GET /api/v3/admin/desktops/:id/screenshot': { expect: allow(['admin', 'manager'], 'passes'), req: () => ({ path: `${A}/admin/desktops/${F.userDesktop}/screenshot` }) },
  'GET /api/v3/admin/templates': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/templates`) },
  'PUT /api/v3/admin/templates/:id': { expect: allow(['admin', 'manager']), req: () => ({ path: `${A}/admin/templates/${F.template}`, method: 'PUT', body: { enabled: true } }) },
  'DELETE /api/v3/admin/templates/:id': {
    expect: allow(['admin', 'manager']), fresh: true,
    req: async () => ({ path: `${A}/admin/templates/${(await makeTemplate(server, await userRow(server, 'advanced'))).id}`, method: 'DELETE' }),
  },
  'GET /api/v3/admin/media': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/media`) },
  'PUT /api/v3/admin/media/:id': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/media/${F.media}`, method: 'PUT', body: { owner_id: (await userRow(server, 'advanced')).id } }) },
  'DELETE /api/v3/admin/media/:id': {
    expect: allow(['admin', 'manager']), fresh: true,
    req: async () => ({ path: `${A}/admin/media/${(await makeMedia(server, await userRow(server, 'advanced'))).id}`, method: 'DELETE' }),
  },
  'GET /api/v3/admin/deployments': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/deployments`) },
  'PUT /api/v3/admin/deployments/:id': { expect: allow(['admin', 'manager']), req: () => ({ path: `${A}/admin/deployments/${F.dep}`, method: 'PUT', body: {} }) },
  'DELETE /api/v3/admin/deployments/:id': {
    expect: allow(['admin', 'manager']), fresh: true,
    req: async () => ({ path: `${A}/admin/deployments/${await makeDeployment(server, tokens.advanced!, [(await userRow(server, 'student03')).id])}`, method: 'DELETE' }),
  },

  // ------------------------------------------------------------------ desktops
  'GET /api/v3/user/desktops': { expect: SIGNED_IN(), req: get(`${A}/user/desktops`) },
  'GET /api/v3/desktop/:action/:id': { expect: allow(DEP_DESKTOP, 'reached'), req: () => ({ path: `${A}/desktop/start/${F.depDesktop}` }) },
  'DELETE /api/v3/desktop/:id': { expect: allow(USER_OWNED), fresh: true, req: async () => ({ path: `${A}/desktop/${(await makeDesktop(server, await userRow(server, 'user'))).id}`, method: 'DELETE' }) },
  'DELETE /api/v3/desktop/:id/permanent': {
    expect: allow(USER_OWNED), fresh: true,
    req: async () => ({ path: `${A}/desktop/${(await makeDesktop(server, await userRow(server, 'user'))).id}/permanent`, method: 'DELETE' }),
  },
  'GET /api/v3/user/templates/allowed/:kind': { expect: SIGNED_IN(), req: get(`${A}/user/templates/allowed/all`) },
  // A template that needs a booking makes no temporary desktop (428): nothing starts.
  'POST /api/v3/nonpersistent': { expect: allow(ADV_OWNED, 'reached'), req: () => ({ path: `${A}/nonpersistent`, method: 'POST', body: { template: F.gpuTemplate } }) },
  'DELETE /api/v3/nonpersistent/:id': { expect: allow(USER_OWNED, 'reached'), req: () => ({ path: `${A}/nonpersistent/${F.userDesktop}`, method: 'DELETE' }) },
  'GET /api/v3/desktop/:id/screenshot': { expect: allow(DEP_DESKTOP, 'passes'), req: () => ({ path: `${A}/desktop/${F.depDesktop}/screenshot` }) },
  'GET /api/v3/desktop/:id/viewer/:viewer': { expect: allow(DEP_DESKTOP, 'reached'), req: () => ({ path: `${A}/desktop/${F.depDesktop}/viewer/browser-vnc` }) },
  // Files to and from the desktop (its guest agent): who may open its viewer; it does not run here (409 desktop_not_running).
  'GET /api/v3/desktop/:id/files': { expect: allow(DEP_DESKTOP, 'reached'), req: () => ({ path: `${A}/desktop/${F.depDesktop}/files` }) },
  'GET /api/v3/desktop/:id/files/:name': { expect: allow(DEP_DESKTOP, 'reached'), req: () => ({ path: `${A}/desktop/${F.depDesktop}/files/notes.txt` }) },
  'PUT /api/v3/desktop/:id/files/:name': {
    expect: allow(DEP_DESKTOP, 'reached'),
    req: () => ({ path: `${A}/desktop/${F.depDesktop}/files/notes.txt`, method: 'PUT', body: {} }),
  },
  'GET /api/v3/desktop/jumperurl/:id': { expect: allow(DEP_DESKTOP), req: () => ({ path: `${A}/desktop/jumperurl/${F.depDesktop}` }) },
  // The bastion (enabled for this suite): a desktop's target, for its owner, admins and its category's managers.
  'GET /api/v3/bastions': { expect: SIGNED_IN(), req: get(`${A}/bastions`) },
  'GET /api/v3/desktop/bastion/:id': { expect: allow(DEP_DESKTOP_DOMAIN), req: () => ({ path: `${A}/desktop/bastion/${F.depDesktop}` }) },
  'PUT /api/v3/desktop/bastion/:id': {
    expect: allow(DEP_DESKTOP_DOMAIN),
    req: () => ({ path: `${A}/desktop/bastion/${F.depDesktop}`, method: 'PUT', body: { ssh: { enabled: true, authorized_keys: [] } } }),
  },
  // The user VPN: one's own file and reset; no guest network here, so 428 no_wireguard_keys.
  'GET /api/v3/user/vpn/config': { expect: SIGNED_IN('reached'), req: get(`${A}/user/vpn/config`) },
  'PUT /api/v3/user/reset-vpn': { expect: SIGNED_IN('reached'), req: () => ({ path: `${A}/user/reset-vpn`, method: 'PUT' }) },
  'PUT /api/v3/desktop/jumperurl_reset/:id': { expect: allow(DEP_DESKTOP), req: () => ({ path: `${A}/desktop/jumperurl_reset/${F.depDesktop}`, method: 'PUT', body: { disabled: false } }) },
  // The direct viewer: the code is the right; an unknown code is refused to everyone alike.
  'GET /api/v3/direct/docs': { expect: PUBLIC(), req: get(`${A}/direct/docs`) },
  'GET /api/v3/direct/:token': { expect: {}, anonStatus: 404, req: () => ({ path: `${A}/direct/${'x'.repeat(40)}` }) },
  'PUT /api/v3/direct/:token/:action': { expect: {}, anonStatus: 404, req: () => ({ path: `${A}/direct/${'x'.repeat(40)}/stop`, method: 'PUT' }) },

  // ------------------------------------------------------------------ domains (new desktops, edit)
  'GET /api/v3/user/hardware/allowed': { expect: SIGNED_IN(), req: get(`${A}/user/hardware/allowed`) },
  'GET /api/v3/desktop/new/check_quota': { expect: SIGNED_IN('reached'), req: get(`${A}/desktop/new/check_quota`) },
  'POST /api/v3/persistent_desktop': {
    expect: allow(ADV_OWNED, 'reached'),
    req: (c) => ({ path: `${A}/persistent_desktop`, method: 'POST', body: { name: uniq(c, 'From template'), template_id: F.template } }),
  },
  'GET /api/v3/domain/info/:id': { expect: allow(DEP_DESKTOP_DOMAIN), req: () => ({ path: `${A}/domain/info/${F.depDesktop}` }) },
  // Its student may not change a deployment's desktop (the deployment decides); it is not stopped (409).
  'PUT /api/v3/domain/:id': { expect: allow(['admin', 'manager'], 'reached'), req: () => ({ path: `${A}/domain/${F.depDesktop}`, method: 'PUT', body: { description: 'matrix' } }) },
  'PUT /api/v3/domain/reservables/:id': { expect: allow(['admin', 'manager'], 'reached'), req: () => ({ path: `${A}/domain/reservables/${F.depDesktop}`, method: 'PUT', body: { vgpus: null } }) },
  'POST /api/v3/domain/:id/recreate_disk': { expect: allow(DEP_DESKTOP_DOMAIN, 'reached'), req: () => ({ path: `${A}/domain/${F.depDesktop}/recreate_disk`, method: 'POST' }) },
  'GET /api/v3/images/desktops': { expect: allow(DEP_DESKTOP_DOMAIN), req: () => ({ path: `${A}/images/desktops?desktop_id=${F.depDesktop}` }) },
  'GET /api/v3/media/installs': { expect: SIGNED_IN(), req: get(`${A}/media/installs`) },

  // ------------------------------------------------------------------ templates (admin, manager, advanced)
  'POST /api/v3/template': { expect: allow(['admin', 'manager', 'advanced'], 'reached'), req: (c) => ({ path: `${A}/template`, method: 'POST', body: { desktop_id: F.advDesktop, name: uniq(c, 'Tpl') } }) },
  'POST /api/v3/template/': { expect: allow(['admin', 'manager', 'advanced'], 'reached'), req: (c) => ({ path: `${A}/template/`, method: 'POST', body: { desktop_id: F.advDesktop, name: uniq(c, 'Tpl') } }) },
  'GET /api/v3/user/templates': { expect: allow(PRIVILEGED), req: get(`${A}/user/templates`) },
  'GET /api/v3/template/:id': { expect: allow(ADV_OWNED), req: () => ({ path: `${A}/template/${F.template}` }) },
  'POST /api/v3/template/duplicate/:id': { expect: allow(ADV_OWNED, 'reached'), req: (c) => ({ path: `${A}/template/duplicate/${F.template}`, method: 'POST', body: { name: uniq(c, 'Copy') } }) },
  'PUT /api/v3/template/update': { expect: allow(ADV_OWNED), req: () => ({ path: `${A}/template/update`, method: 'PUT', body: { id: F.template, description: 'matrix' } }) },
  'GET /api/v3/template/tree/:id': { expect: allow(ADV_OWNED), req: () => ({ path: `${A}/template/tree/${F.template}` }) },
  'DELETE /api/v3/template/:id': { expect: allow(ADV_OWNED), fresh: true, req: async () => ({ path: `${A}/template/${(await makeTemplate(server, await userRow(server, 'advanced'))).id}`, method: 'DELETE' }) },
  'POST /api/v3/template/to/desktop': { expect: allow(ADV_OWNED, 'reached'), req: (c) => ({ path: `${A}/template/to/desktop`, method: 'POST', body: { template_id: F.template, name: uniq(c, 'Desk') } }) },
  'POST /api/v3/allowed/table/:table': { expect: allow(PRIVILEGED), req: () => ({ path: `${A}/allowed/table/users`, method: 'POST', body: { term: 'er' } }) },
  'POST /api/v3/admin/allowed/term/:table': { expect: allow(PRIVILEGED), req: () => ({ path: `${A}/admin/allowed/term/users`, method: 'POST', body: { term: 'er' } }) },
  'POST /api/v3/admin/allowed/update/:table': {
    expect: allow(ADV_OWNED),
    req: () => ({ path: `${A}/admin/allowed/update/domains`, method: 'POST', body: { id: F.template, allowed: { groups: false, users: false } } }),
  },

  // ------------------------------------------------------------------ media (admin, manager, advanced)
  'GET /api/v3/media': { expect: allow(PRIVILEGED), req: get(`${A}/media`) },
  'GET /api/v3/media_allowed': { expect: allow(PRIVILEGED), req: get(`${A}/media_allowed`) },
  // A private address is refused before anything is stored (4xx): no download.
  'POST /api/v3/media': { expect: allow(PRIVILEGED, 'reached'), req: (c) => ({ path: `${A}/media`, method: 'POST', body: { name: uniq(c, 'Iso'), url: 'http://127.0.0.1:9/x.iso', kind: 'iso' } }) },
  'POST /api/v3/media/abort/:id': { expect: allow(ADV_OWNED, 'reached'), req: () => ({ path: `${A}/media/abort/${F.media}`, method: 'POST' }) },
  'POST /api/v3/media/download/:id': { expect: allow(ADV_OWNED, 'reached'), req: () => ({ path: `${A}/media/download/${F.media}`, method: 'POST', body: {} }) },
  'GET /api/v3/media/desktops/:id': { expect: allow(ADV_OWNED), req: () => ({ path: `${A}/media/desktops/${F.media}` }) },
  'DELETE /api/v3/media/:id': { expect: allow(ADV_OWNED), fresh: true, req: async () => ({ path: `${A}/media/${(await makeMedia(server, await userRow(server, 'advanced'))).id}`, method: 'DELETE' }) },
  'POST /api/v3/desktop/from/media': {
    expect: allow(ADV_OWNED, 'reached'),
    req: (c) => ({ path: `${A}/desktop/from/media`, method: 'POST', body: { name: uniq(c, 'From media'), media_id: F.media, kind: 'iso', disk_size: 1 } }),
  },

  // ------------------------------------------------------------------ storage and quotas
  'GET /api/v3/storage/ready': { expect: SIGNED_IN(), req: get(`${A}/storage/ready`) },
  // Disks: their owner, admin and manager of the category; the role `user` grows no disk.
  'PUT /api/v3/storage/:id/priority/:priority/increase/:increment': { expect: allow(['admin', 'manager'], 'reached'), req: () => ({ path: `${A}/storage/${F.depDisk}/priority/low/increase/1`, method: 'PUT' }) },
  'PUT /api/v3/storage/:id/abort_operations': { expect: allow(DEP_DESKTOP_DOMAIN, 'reached'), req: () => ({ path: `${A}/storage/${F.depDisk}/abort_operations`, method: 'PUT' }) },
  'GET /api/v3/desktops/new/check_quota': { expect: SIGNED_IN('reached'), req: get(`${A}/desktops/new/check_quota`) },
  'GET /api/v3/templates/new/check_quota': { expect: SIGNED_IN('reached'), req: get(`${A}/templates/new/check_quota`) },
  'GET /api/v3/media/new/check_quota': { expect: SIGNED_IN('reached'), req: get(`${A}/media/new/check_quota`) },
  'GET /api/v3/deployments/new/check_quota': { expect: SIGNED_IN('reached'), req: get(`${A}/deployments/new/check_quota`) },

  // ------------------------------------------------------------------ recycle bin
  'GET /api/v3/recycle_bin/item_count/user': { expect: SIGNED_IN(), req: get(`${A}/recycle_bin/item_count/user`) },
  'GET /api/v3/recycle_bin/item_count': { expect: allow(['admin', 'manager']), req: get(`${A}/recycle_bin/item_count`) },
  'GET /api/v3/recycle_bin/count': { expect: SIGNED_IN(), req: get(`${A}/recycle_bin/count`) },
  'GET /api/v3/recycle-bin/user/cutoff-time': { expect: SIGNED_IN(), req: get(`${A}/recycle-bin/user/cutoff-time`) },
  'GET /api/v3/recycle_bin/config/default-delete': { expect: SIGNED_IN(), req: get(`${A}/recycle_bin/config/default-delete`) },
  'GET /api/v3/recycle_bin/:id': { expect: allow(USER_OWNED), req: () => ({ path: `${A}/recycle_bin/${F.bin}` }) },
  // Restoring may meet the owner's desktop quota (428): reached.
  'PUT /api/v3/recycle_bin/restore/:id': {
    expect: allow(USER_OWNED, 'reached'), fresh: true,
    req: async () => ({ path: `${A}/recycle_bin/restore/${(await makeBinEntry(server, await userRow(server, 'user'), tokens.user!)).id}`, method: 'PUT' }),
  },
  'DELETE /api/v3/recycle_bin/empty': { expect: SIGNED_IN(), late: true, req: () => ({ path: `${A}/recycle_bin/empty`, method: 'DELETE' }) },
  'DELETE /api/v3/recycle_bin/:id': {
    expect: allow(USER_OWNED), fresh: true,
    req: async () => ({ path: `${A}/recycle_bin/${(await makeBinEntry(server, await userRow(server, 'user'), tokens.user!)).id}`, method: 'DELETE' }),
  },

  // ------------------------------------------------------------------ deployments (admin, manager, advanced; owners and co-owners)
  'GET /api/v3/deployments': { expect: allow(PRIVILEGED), req: get(`${A}/deployments`) },
  // Desktop pools: made from advanced's template (only who may use it), managed by its owner, admin and the category's manager.
  'GET /api/v3/desktop-pools': { expect: allow(PRIVILEGED), req: get(`${A}/desktop-pools`) },
  'POST /api/v3/desktop-pools': { expect: allow(ADV_OWNED), req: (c) => ({ path: `${A}/desktop-pools`, method: 'POST', body: poolBody(uniq(c, 'Pool').replace(/[^A-Za-z0-9 ]/g, '')) }) },
  'GET /api/v3/desktop-pools/:id': { expect: allow(ADV_OWNED), req: () => ({ path: `${A}/desktop-pools/${F.pool}` }) },
  'PUT /api/v3/desktop-pools/:id': { expect: allow(ADV_OWNED), req: () => ({ path: `${A}/desktop-pools/${F.pool}`, method: 'PUT', body: { description: 'matrix' } }) },
  'DELETE /api/v3/desktop-pools/:id': { expect: allow(ADV_OWNED), fresh: true, req: async () => ({ path: `${A}/desktop-pools/${await poolFixture()}`, method: 'DELETE' }) },
  'GET /api/v3/user/desktop-pools': { expect: SIGNED_IN(), req: get(`${A}/user/desktop-pools`) },
  // Students 1A (user, student) and who manages it; the pool is disabled: a 409 past the rights.
  'POST /api/v3/desktop-pools/:id/take': { expect: allow(['admin', 'manager', 'advanced', 'user', 'student'], 'reached'), req: () => ({ path: `${A}/desktop-pools/${F.pool}/take`, method: 'POST' }) },
  // From advanced's template (not shared): only who may use it.
  'POST /api/v3/deployments': {
    expect: allow(ADV_OWNED, 'reached'),
    req: (c) => ({ path: `${A}/deployments`, method: 'POST', body: { name: uniq(c, 'Dep'), template_id: F.template, desktop_name: 'Matrix desktop', allowed: { groups: false, users: [ids.student] } } }),
  },
  'POST /api/v3/deployments/new/check_quota': { expect: allow(PRIVILEGED, 'reached'), req: () => ({ path: `${A}/deployments/new/check_quota`, method: 'POST', body: { allowed: { groups: false, users: [ids.student] } } }) },
  'PUT /api/v3/groups_users/count': { expect: allow(PRIVILEGED), req: () => ({ path: `${A}/groups_users/count`, method: 'PUT', body: { groups: ['default-students-1a'], users: [] } }) },
  'GET /api/v3/deployment/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployment/${F.dep}` }) },
  'PUT /api/v3/deployment/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployment/${F.dep}`, method: 'PUT', body: { description: 'matrix' } }) },
  'PUT /api/v3/deployment/users/:id': { expect: allow(DEP_EDIT, 'reached'), req: () => ({ path: `${A}/deployment/users/${F.dep}`, method: 'PUT', body: { allowed: { groups: false, users: [ids.student] } } }) },
  'GET /api/v3/deployment/info/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployment/info/${F.dep}` }) },
  'PUT /api/v3/deployments/visible/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployments/visible/${F.dep}`, method: 'PUT', body: {} }) },
  'PUT /api/v3/deployments/domain/visible/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployments/domain/visible/${F.depDesktop}`, method: 'PUT', body: { visible: true } }) },
  'DELETE /api/v3/deployments/:id': {
    expect: allow(DEP_OWNER), fresh: true,
    req: async () => ({ path: `${A}/deployments/${await makeDeployment(server, tokens.advanced!, [ids.student], { coOwners: [ids.coowner] })}`, method: 'DELETE' }),
  },
  'DELETE /api/v3/deployments/:id/permanent': {
    expect: allow(DEP_OWNER), fresh: true,
    req: async () => ({ path: `${A}/deployments/${await makeDeployment(server, tokens.advanced!, [ids.student], { coOwners: [ids.coowner] })}/permanent`, method: 'DELETE' }),
  },
  'PUT /api/v3/deployments/:id': { expect: allow(DEP_EDIT, 'reached'), req: () => ({ path: `${A}/deployments/${F.dep}`, method: 'PUT' }) },
  'PUT /api/v3/deployments/start/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployments/start/${F.dep}`, method: 'PUT' }) },
  'PUT /api/v3/deployments/stop/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployments/stop/${F.dep}`, method: 'PUT' }) },
  'GET /api/v3/deployments/directviewer_csv/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployments/directviewer_csv/${F.dep}` }) },
  'GET /api/v3/deployment/co-owners/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployment/co-owners/${F.dep}` }) },
  'PUT /api/v3/deployment/co-owners/:id': { expect: allow(DEP_OWNER), req: () => ({ path: `${A}/deployment/co-owners/${F.dep}`, method: 'PUT', body: { co_owners: [ids.coowner] } }) },
  'GET /api/v3/deployment/permissions/:id': { expect: allow(DEP_EDIT), req: () => ({ path: `${A}/deployment/permissions/${F.dep}` }) },

  // ------------------------------------------------------------------ bookings (the GPU desktop of `user`)
  'GET /api/v3/bookings/user/:itemId/:itemType': { expect: allow(USER_OWNED), req: () => ({ path: `${A}/bookings/user/${F.gpuDesktop}/desktop?${rangeQuery}` }) },
  'GET /api/v3/bookings/user/:itemId/:itemType/:returnType': { expect: allow(USER_OWNED), req: () => ({ path: `${A}/bookings/user/${F.gpuDesktop}/desktop/event?${rangeQuery}` }) },
  'GET /api/v3/bookings/user': { expect: SIGNED_IN(), req: () => ({ path: `${A}/bookings/user?${rangeQuery}` }) },
  'GET /api/v3/bookings/priority/:itemType/:itemId': { expect: allow(USER_OWNED), req: () => ({ path: `${A}/bookings/priority/desktop/${F.gpuDesktop}` }) },
  'POST /api/v3/booking/event': {
    expect: allow(USER_OWNED, 'reached'),
    req: () => ({ path: `${A}/booking/event`, method: 'POST', body: { element_id: F.gpuDesktop, element_type: 'desktop', title: 'Matrix', ...bookingSlot(60) } }),
  },
  'PUT /api/v3/booking/event/:id': { expect: allow(USER_OWNED, 'reached'), req: () => ({ path: `${A}/booking/event/${F.booking}`, method: 'PUT', body: { title: 'Moved', ...bookingSlot(26) } }) },
  'DELETE /api/v3/booking/event/:id': {
    expect: allow(USER_OWNED), fresh: true,
    req: async () => ({ path: `${A}/booking/event/${await makeBooking(server, await userRow(server, 'user'), tokens.user!, F.gpuDesktop, 30)}`, method: 'DELETE' }),
  },
  'GET /api/v3/booking/max_booking_date/:id': { expect: allow(USER_OWNED, 'reached'), req: () => ({ path: `${A}/booking/max_booking_date/${F.gpuDesktop}` }) },
  'GET /api/v3/booking/reservables_available': { expect: SIGNED_IN(), req: get(`${A}/booking/reservables_available`) },
  'GET /api/v3/domains/allowed/reservables': { expect: SIGNED_IN(), req: get(`${A}/domains/allowed/reservables`) },

  // ------------------------------------------------------------------ the planner (admin)
  'GET /api/v3/admin/reservables': { expect: allow(['admin']), req: get(`${A}/admin/reservables`) },
  'GET /api/v3/admin/reservables/:itemType': { expect: allow(['admin']), req: get(`${A}/admin/reservables/gpus`) },
  'GET /api/v3/admin/reservables/enabled/:itemType/:itemId': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/reservables/enabled/gpus/${F.card}` }) },
  'GET /api/v3/admin/reservables_planner/:itemId/:start/:end': {
    expect: allow(['admin']),
    req: () => ({ path: fillPath(`${A}/admin/reservables_planner/:itemId/:start/:end`, { itemId: F.card, start: bookingDate(new Date(Date.now() - 86_400_000)), end: bookingDate(new Date(Date.now() + 86_400_000)) }) }),
  },
  'POST /api/v3/admin/reservables_planner': {
    expect: allow(['admin'], 'reached'),
    req: () => ({ path: `${A}/admin/reservables_planner`, method: 'POST', body: { item_type: 'gpus', item_id: F.card, subitem_id: 'no-such-profile', ...bookingSlot(24 * 60) } }),
  },
  'PUT /api/v3/admin/reservables_planner/:id': {
    expect: allow(['admin'], 'reached'),
    req: () => ({ path: `${A}/admin/reservables_planner/demo-plan-4q`, method: 'PUT', body: { subitem_id: 'no-such-profile', ...bookingSlot(24 * 60) } }),
  },
  // The console's GPU cards and profiles, booking rules (admins only) and auto-shutdown policies (admins; managers their category's).
  'POST /api/v3/admin/reservables/:itemType': { expect: allow(['admin']), req: (c) => ({ path: `${A}/admin/reservables/gpus`, method: 'POST', body: { name: uniq(c, 'Card') } }) },
  'PUT /api/v3/admin/reservables/:itemType/:itemId': { expect: allow(['admin']), req: () => ({ path: `${A}/admin/reservables/gpus/${F.card}`, method: 'PUT', body: { enabled: true } }) },
  'DELETE /api/v3/admin/reservables/:itemType/:itemId': { expect: allow(['admin']), fresh: true, req: async () => ({ path: `${A}/admin/reservables/gpus/${(await reserveFixture.card()).id}`, method: 'DELETE' }) },
  'POST /api/v3/admin/reservables/:itemType/:itemId/subitems': {
    expect: allow(['admin']),
    req: async () => ({ path: `${A}/admin/reservables/gpus/${(await reserveFixture.card()).id}/subitems`, method: 'POST', body: { profile: '8Q', name: 'Eight', units: 6 } }),
  },
  'PUT /api/v3/admin/reservables/:itemType/:itemId/subitems/:subitemId': {
    expect: allow(['admin']),
    req: async () => {
      const card = await reserveFixture.card(true);
      return { path: `${A}/admin/reservables/gpus/${card.id}/subitems/${card.profile}`, method: 'PUT', body: { description: 'edited' } };
    },
  },
  'DELETE /api/v3/admin/reservables/:itemType/:itemId/subitems/:subitemId': {
    expect: allow(['admin']), fresh: true,
    req: async () => {
      const card = await reserveFixture.card(true);
      return { path: `${A}/admin/reservables/gpus/${card.id}/subitems/${card.profile}`, method: 'DELETE' };
    },
  },
  'GET /api/v3/admin/booking_priorities': { expect: allow(['admin']), req: get(`${A}/admin/booking_priorities`) },
  'GET /api/v3/admin/booking_priorities/:id': { expect: allow(['admin']), req: get(`${A}/admin/booking_priorities/default`) },
  'POST /api/v3/admin/booking_priorities': {
    expect: allow(['admin']),
    req: (c) => ({ path: `${A}/admin/booking_priorities`, method: 'POST', body: { name: uniq(c, 'Rule'), allowed: { users: ['nobody'] }, priority: 3 } }),
  },
  'PUT /api/v3/admin/booking_priorities/:id': { expect: allow(['admin']), req: async () => ({ path: `${A}/admin/booking_priorities/${await reserveFixture.rule()}`, method: 'PUT', body: { max_items: 2 } }) },
  'DELETE /api/v3/admin/booking_priorities/:id': { expect: allow(['admin']), fresh: true, req: async () => ({ path: `${A}/admin/booking_priorities/${await reserveFixture.rule()}`, method: 'DELETE' }) },
  'GET /api/v3/admin/shutdown_policies': { expect: allow(['admin', 'manager']), req: get(`${A}/admin/shutdown_policies`) },
  'GET /api/v3/admin/shutdown_policies/:id': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/shutdown_policies/${await reserveFixture.policy()}` }) },
  'POST /api/v3/admin/shutdown_policies': {
    expect: allow(['admin', 'manager']),
    req: async (c) => ({ path: `${A}/admin/shutdown_policies`, method: 'POST', body: { name: uniq(c, 'Policy'), kind: 'group', target: await peopleFixture.group(), idle_time: 30 } }),
  },
  'PUT /api/v3/admin/shutdown_policies/:id': { expect: allow(['admin', 'manager']), req: async () => ({ path: `${A}/admin/shutdown_policies/${await reserveFixture.policy()}`, method: 'PUT', body: { max_time: 90 } }) },
  'DELETE /api/v3/admin/shutdown_policies/:id': { expect: allow(['admin', 'manager']), fresh: true, req: async () => ({ path: `${A}/admin/shutdown_policies/${await reserveFixture.policy()}`, method: 'DELETE' }) },
  'DELETE /api/v3/admin/reservables_planner/:id': { expect: allow(['admin'], 'reached'), late: true, req: () => ({ path: `${A}/admin/reservables_planner/demo-plan-4q`, method: 'DELETE' }) },

  // ------------------------------------------------------------------ covers
  'GET /assets/img/desktops/stock/:file': { expect: PUBLIC('passes'), req: get('/assets/img/desktops/stock/1.jpg') },
  'GET /assets/img/desktops/user/:file': { expect: PUBLIC('passes'), req: get('/assets/img/desktops/user/none.png') },
};

const outcomeOf = (c: Case, caller: Caller): Outcome => c.expect[caller] ?? 'denied';

const servers = new Set<string>();
/** The processes that answered (their X-Server-Id), for a run through a load balancer. */
export const serversSeen = (): ReadonlySet<string> => servers;

export async function send(req: Req, token: string | undefined) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let body: FormData | string | undefined;
  if (req.form) {
    const form = new FormData();
    for (const [k, v] of Object.entries(req.form)) form.append(k, v);
    body = form;
  } else if (req.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(req.body);
  }
  const res = await fetch(`${server.url}${req.path}`, { method: req.method ?? 'GET', headers, body, redirect: 'manual' });
  const text = await res.text();
  const answeredBy = res.headers.get('x-server-id');
  if (answeredBy) servers.add(answeredBy);
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { description_code?: string }).description_code;
  } catch {
    code = undefined;
  }
  return { status: res.status, code, text };
}

/** Why the answer does not fit the expected class (undefined when it fits). */
function mismatch(c: Case, caller: Caller, want: Outcome, got: { status: number; code?: string }): string | undefined {
  const { status, code } = got;
  if (status >= 500) return `${status} ${code ?? ''}`;
  const deniedStatus = status === 401 || status === 403 || status === 404;
  switch (want) {
    case 'ok':
      return status >= 200 && status < 300 ? undefined : `${status} ${code ?? ''}`;
    case 'reached':
      return deniedStatus ? `${status} ${code ?? ''}` : undefined;
    case 'passes':
      return status === 401 || status === 403 ? `${status} ${code ?? ''}` : undefined;
    case 'denied': {
      const anonStatus = c.anonStatus ?? 401;
      if (caller === 'anon' && status !== anonStatus) return `${status} ${code ?? ''} (nobody signed in: ${anonStatus})`;
      if (caller === 'anon' && anonStatus >= 300 && anonStatus < 400) return undefined;
      if (!deniedStatus) return `${status} ${code ?? ''}`;
      if (!code) return `${status} without description_code`;
      return undefined;
    }
  }
}

let cases = 0;
/** How many route × caller cases ran. */
export const casesRun = () => cases;
export async function runCase(key: string) {
  const c = MATRIX[key]!;
  const failures: string[] = [];
  const one = async (caller: Caller, given?: Req) => {
    const want = outcomeOf(c, caller);
    const req = given ?? (await c.req(caller));
    const got = await send(req, tokens[caller]);
    cases++;
    const why = mismatch(c, caller, want, got);
    if (why) failures.push(`${caller}: expected ${want}, got ${why} (${req.method ?? 'GET'} ${req.path}) ${got.text.slice(0, 160)}`);
  };
  const denied = CALLERS.filter((x) => outcomeOf(c, x) === 'denied');
  const allowed = CALLERS.filter((x) => outcomeOf(c, x) !== 'denied');
  // Limited concurrency: the denied callers together, then the allowed ones (one at a time when each destroys an object).
  // Denied callers share one object (they must not destroy it); each allowed one gets its own when `fresh`.
  const shared = c.fresh ? await c.req('anon') : undefined;
  await Promise.all(denied.map((x) => one(x, shared)));
  if (c.fresh || c.late) for (const x of allowed) await one(x);
  else await Promise.all(allowed.map((x) => one(x)));
  expect(failures.join('\n'), key).toBe('');
}

/** Signs in every caller and makes the objects of the table (through the target's URL, and straight in its database). */
export async function prepareMatrix(target: MatrixTarget) {
  server = target;
  const { db } = server.ctx;
  const coowner = await copyUser(server, { username: 'advanced' }, 'coowner');
  const names: Record<Exclude<Caller, 'anon'>, [string, string]> = {
    admin: ['admin', 'default'], manager: ['manager', 'default'], advanced: ['advanced', 'default'], user: ['user', 'default'],
    student: ['student01', 'default'], researcher: ['researcher', 'lab'], coowner: ['coowner', 'default'],
  };
  for (const [caller, [username, category]] of Object.entries(names) as [Exclude<Caller, 'anon'>, [string, string]][]) {
    ids[caller] = (await userRow(server, username, category)).id;
    tokens[caller] = await tokenOf(server, username, category);
  }
  ids.coowner = coowner.id;
  const [advanced, user, researcher] = await Promise.all([userRow(server, 'advanced'), userRow(server, 'user'), userRow(server, 'researcher', 'lab')]);

  // The deployment: advanced's, co-owned, one desktop for the student; its desktops marked Starting (nothing boots).
  F.dep = await makeDeployment(server, tokens.advanced!, [ids.student], { coOwners: [ids.coowner] });
  await db.update(schema.domains).set({ status: 'Starting' }).where(eq(schema.domains.tag, F.dep));
  const [depDesktop] = await db.select().from(schema.domains).where(eq(schema.domains.tag, F.dep));
  F.depDesktop = depDesktop!.id;
  const [disk] = await db.select().from(schema.domainDisks).where(eq(schema.domainDisks.domainId, F.depDesktop));
  F.depDisk = disk!.storageId;

  F.userDesktop = (await makeDesktop(server, user)).id;
  const [gpu] = await db.select().from(schema.domains).where(and(eq(schema.domains.userId, user.id), eq(schema.domains.name, 'GPU desktop')));
  F.gpuDesktop = gpu!.id;
  const [adv] = await db.select().from(schema.domains).where(and(eq(schema.domains.userId, advanced.id), eq(schema.domains.kind, 'desktop')));
  F.advDesktop = adv!.id;
  F.template = (await makeTemplate(server, advanced)).id;
  F.pool = await poolFixture();
  const gpuTemplate = await makeTemplate(server, advanced, 'GPU template');
  await db.update(schema.domains).set({ hardware: { ...gpuTemplate.hardware, reservables: gpu!.hardware.reservables } }).where(eq(schema.domains.id, gpuTemplate.id));
  F.gpuTemplate = gpuTemplate.id;
  const [card] = await db.select().from(schema.reservableItems);
  F.card = card!.id;
  F.media = (await makeMedia(server, advanced)).id;
  F.bin = (await makeBinEntry(server, user, tokens.user!)).id;
  F.booking = await makeBooking(server, user, tokens.user!, F.gpuDesktop);

  // The other category's objects, for the lists.
  await apiTokenFixture(researcher.id);
  await makeDesktop(server, researcher);
  await makeTemplate(server, researcher);
  await makeMedia(server, researcher);
  await makeBinEntry(server, researcher, tokens.researcher!);
  F.labDep = await makeDeployment(server, tokens.researcher!, [researcher.id]);
  // The bastion on (its routes answer as for a desktop that has one), as an admin sets it.
  const bastion = await send({ path: `${A}/admin/settings/bastion`, method: 'PUT', body: { enabled: true } }, tokens.admin);
  if (bastion.status !== 200) throw new Error(`bastion not enabled: ${bastion.status} ${bastion.text}`);
}

/** The order the cases run in: those that end or change sessions late, logging out (it ends every session) last of all. */
export function matrixOrder(): string[] {
  const order = Object.keys(MATRIX).sort((a, b) => Number(MATRIX[a]!.late ?? false) - Number(MATRIX[b]!.late ?? false));
  order.push(...order.splice(order.indexOf('POST /authentication/logout'), 1));
  return order;
}

const LISTS: Req[] = [
  { path: `${A}/user/desktops` },
  { path: `${A}/user/templates` },
  { path: `${A}/user/templates/allowed/all` },
  { path: `${A}/user/templates/allowed/shared` },
  { path: `${A}/media` },
  { path: `${A}/media_allowed` },
  { path: `${A}/deployments` },
  { path: `${A}/recycle_bin/item_count/user` },
  { path: `${A}/recycle_bin/item_count` },
  { path: `${A}/admin/users` },
  { path: `${A}/admin/api-tokens` },
  { path: `${A}/storage/ready` },
  { path: `${A}/bookings/user?${rangeQuery}` },
  { path: `${A}/booking/reservables_available` },
  { path: `${A}/allowed/table/users`, method: 'POST', body: { term: 'er' } },
  { path: `${A}/allowed/table/users`, method: 'POST', body: { term: 're' } },
  { path: `${A}/allowed/table/groups`, method: 'POST', body: { term: 'De' } },
  { path: `${A}/admin/allowed/term/users`, method: 'POST', body: { term: 'er' } },
  { path: `${A}/admin/allowed/term/users`, method: 'POST', body: { term: 're' } },
  { path: `${A}/admin/allowed/term/groups`, method: 'POST', body: { term: 'De' } },
  { path: `${A}/admin/allowed/term/groups`, method: 'POST', body: { term: 'me' } },
  { path: `${A}/admin/allowed/term/categories`, method: 'POST', body: { term: 'ab' } },
];

/** The callers whose lists are checked (admins see every category). */
export const LIST_CALLERS = SIGNED.filter((c) => c !== 'admin');

/** What the lists show `caller` of another category's objects (and any 5xx they answer): none expected. */
export async function listLeaks(caller: Caller): Promise<string[]> {
  const { db } = server.ctx;
  const mine = caller === 'researcher' ? 'lab' : 'default';
  // Everything of the other categories, except the demo template (shared with everyone), its owner and their group.
  const [demo] = await db.select().from(schema.domains).where(eq(schema.domains.name, 'Demo Linux'));
  const foreign = [
    ...(await db.select({ id: schema.domains.id }).from(schema.domains).where(and(ne(schema.domains.categoryId, mine), ne(schema.domains.id, demo!.id)))),
    ...(await db.select({ id: schema.media.id }).from(schema.media).where(ne(schema.media.categoryId, mine))),
    ...(await db.select({ id: schema.deployments.id }).from(schema.deployments).where(ne(schema.deployments.categoryId, mine))),
    ...(await db.select({ id: schema.recycleBin.id }).from(schema.recycleBin).where(ne(schema.recycleBin.ownerCategoryId, mine))),
    ...(await db.select({ id: schema.users.id }).from(schema.users).where(and(ne(schema.users.categoryId, mine), ne(schema.users.id, demo!.userId)))),
    ...(await db.select({ id: schema.groups.id }).from(schema.groups).where(and(ne(schema.groups.categoryId, mine), ne(schema.groups.id, demo!.groupId)))),
  ].map((r) => r.id).filter((id) => id.length >= 8);
  expect(foreign.length).toBeGreaterThan(3);
  const leaks: string[] = [];
  for (const req of LISTS) {
    const got = await send(req, tokens[caller]);
    if (got.status >= 500) leaks.push(`${req.path}: ${got.status}`);
    for (const id of foreign) if (got.text.includes(id)) leaks.push(`${req.method ?? 'GET'} ${req.path} shows ${id}`);
  }
  return leaks;
}

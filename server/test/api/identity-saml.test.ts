// SAML 2.0 sign-in against a real IdP in its own process (helpers/saml-idp-server.mjs, samlify's IdP side, its own key):
// the redirect dance driven with fetch — our AuthnRequest to the IdP, its sign-in form, its signed Response
// posted to our ACS — first sign-in and mapping, the attacks (bad signature, wrong audience, expired, replayed,
// another IdP's assertion, unknown or missing InResponseTo), an IdP that is down, the console's test, our SP
// metadata, logout both ways, and nothing secret in the log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { eq } from 'drizzle-orm';
import { schema } from '../../src/db';
import { openSecret } from '../../src/auth/secret-box';
import { call, login, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { IDP_ACCOUNTS, startSamlIdp, type SamlIdp } from '../helpers/saml-idp';
import { scaled } from '../helpers/slowdown';

let server: TestServer;
let idp: SamlIdp;
let otherIdp: SamlIdp;
let admin: string;
/** Every line the server logged while the tests ran. */
const logLines: string[] = [];
/** Every SAMLResponse the IdPs gave (none may be logged). */
const responses: string[] = [];

const A = '/api/v3/admin/identity-providers';
const rules = [
  { attribute: 'groups', value: 'teachers', group_id: 'default-teachers', role: 'advanced' },
  { attribute: 'groups', value: 'students', group_id: 'default-students-1a', role: 'user' },
];

async function createProvider(name: string, settings: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await call(server, A, { token: admin, body: { kind: 'saml', name, category_id: 'default', rules, unmatched: 'refuse', settings, ...extra } });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; callback_url: string; metadata_url: string };
}

const manual = { redirect: 'manual' } as const;
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
const formAction = (html: string) => /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');

/** Through the IdP's sign-in form: the Response it posts to the ACS (not yet posted). */
async function idpResponse(startUrl: string, username: keyof typeof IDP_ACCOUNTS, opts: { mode?: string; password?: string } = {}) {
  const start = await fetch(startUrl, manual);
  expect(start.status).toBe(303);
  const idpUrl = start.headers.get('location')!;
  const form = await fetch(idpUrl);
  if (form.status !== 200) throw new Error(`the IdP refused our AuthnRequest: ${await form.text()}`);
  const pending = hidden(await form.text(), 'pending')!;
  const signedIn = await fetch(`${new URL(idpUrl).origin}/sso/login`, {
    method: 'POST',
    body: new URLSearchParams({ pending, username, password: opts.password ?? IDP_ACCOUNTS[username], mode: opts.mode ?? '' }),
    ...manual,
  });
  expect(signedIn.status).toBe(200);
  const html = await signedIn.text();
  const samlResponse = hidden(html, 'SAMLResponse')!;
  responses.push(samlResponse);
  return { acs: formAction(html)!, samlResponse, idpCookie: signedIn.headers.get('set-cookie')?.split(';')[0] ?? '' };
}

const postAcs = (acs: string, samlResponse: string) => fetch(acs, { method: 'POST', body: new URLSearchParams({ SAMLResponse: samlResponse }), ...manual });

/** Signs in through the provider: where the ACS sent the browser, and the hand-off token if any. */
async function samlSignIn(providerId: string, username: keyof typeof IDP_ACCOUNTS, mode?: string) {
  const got = await idpResponse(`${server.url}/authentication/login?provider=saml&provider_id=${providerId}`, username, { mode });
  const res = await postAcs(got.acs, got.samlResponse);
  expect(res.status).toBe(303);
  const token = /authorization=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  return { location: res.headers.get('location')!, token, ...got };
}

/** Whether the server logged a refusal for `reason` (since line `from`). */
const warned = (reason: string, from = 0) => logLines.slice(from).some((l) => l.includes('SAML response refused') && l.includes(`"reason":"${reason}"`));

let main: { id: string; callback_url: string; metadata_url: string };

beforeAll(async () => {
  [idp, otherIdp] = await Promise.all([startSamlIdp(), startSamlIdp()]);
  server = await startTestServer({ env: { LOG_LEVEL: 'debug' } });
  // The IdP reads our metadata at our entity id: the public address is this server's own.
  (server.ctx.config as { publicUrl?: string }).publicUrl = server.url;
  const stream = (server.ctx.log as unknown as Record<symbol, { write: (s: string) => boolean }>)[pino.symbols.streamSym]!;
  stream.write = (line: string) => (logLines.push(line), true);
  admin = await loginToken(server, 'admin');
  main = await createProvider('Test IdP', { metadata_url: idp.metadataUrl });
}, scaled(120_000));

afterAll(async () => {
  await server?.close();
  await Promise.all([idp?.close(), otherIdp?.close()]);
});

describe('SAML 2.0 sign-in', () => {
  it('serves our SP metadata with the ACS, the SLO and the signing certificate (its key sealed in the database)', async () => {
    const res = await fetch(`${server.url}/authentication/saml/metadata/${main.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/samlmetadata+xml');
    const xml = await res.text();
    expect(main.metadata_url).toBe(`${server.url}/authentication/saml/metadata/${main.id}`);
    expect(xml).toContain(`entityID="${main.metadata_url}"`);
    expect(xml).toContain(`Location="${main.callback_url}"`);
    expect(xml).toContain(`Location="${server.url}/authentication/saml/slo/${main.id}"`);
    expect(xml).toContain('WantAssertionsSigned="true"');
    const [row] = await server.ctx.db.select().from(schema.identityProviders).where(eq(schema.identityProviders.id, main.id));
    expect(row!.secret).not.toContain('PRIVATE KEY');
    const pem = openSecret(server.config.secret, row!.secret!);
    const certBody = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END/.exec(pem)![1]!.replace(/\s/g, '');
    expect(xml.replace(/\s/g, '')).toContain(certBody);
    // The same key on the next read; the original's address gives the first SAML provider's.
    expect(await (await fetch(`${server.url}/authentication/saml/metadata/${main.id}`)).text()).toBe(xml);
    expect(await (await fetch(`${server.url}/authentication/saml/metadata`)).text()).toBe(xml);
    expect((await fetch(`${server.url}/authentication/saml/metadata/nope`)).status).toBe(404);
  });

  it('takes the admin\'s own key pair (PEM key and certificate), refuses a secret that is not one, makes a new one when cleared', async () => {
    const own = await createProvider('Own key', { metadata_url: idp.metadataUrl });
    const body = { kind: 'saml', name: 'Own key', category_id: 'default', settings: { metadata_url: idp.metadataUrl } };
    const bad = await call(server, `${A}/${own.id}`, { token: admin, method: 'PUT', body: { ...body, secret: 'not a key' } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).description_code).toBeTruthy();
    const [main_] = await server.ctx.db.select().from(schema.identityProviders).where(eq(schema.identityProviders.id, main.id));
    const pem = openSecret(server.config.secret, main_!.secret!);
    expect((await call(server, `${A}/${own.id}`, { token: admin, method: 'PUT', body: { ...body, secret: pem } })).status).toBe(200);
    const cert = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END/.exec(pem)![1]!.replace(/\s/g, '');
    expect((await (await fetch(own.metadata_url)).text()).replace(/\s/g, '')).toContain(cert);
    expect((await call(server, `${A}/${own.id}`, { token: admin, method: 'PUT', body: { ...body, secret: '' } })).status).toBe(200);
    expect((await (await fetch(own.metadata_url)).text()).replace(/\s/g, '')).not.toContain(cert);
    await call(server, `${A}/${own.id}`, { token: admin, method: 'DELETE' });
  });

  it('lets the admin test a sign-in: the preview says what would be made, and nothing is', async () => {
    const test = await call(server, `${A}/${main.id}/test`, { token: admin, body: {} });
    expect(test.status).toBe(200);
    const { url } = (await test.json()) as { url: string };
    expect(url.startsWith(`${idp.url}/sso?`)).toBe(true);
    // The console's address is where the IdP's page goes: follow it from the IdP's redirect address.
    const form = await fetch(url);
    const pending = hidden(await form.text(), 'pending')!;
    const html = await (await fetch(`${idp.url}/sso/login`, { method: 'POST', body: new URLSearchParams({ pending, username: 'student1', password: IDP_ACCOUNTS.student1 }) })).text();
    responses.push(hidden(html, 'SAMLResponse')!);
    const res = await postAcs(formAction(html)!, hidden(html, 'SAMLResponse')!);
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!, server.url);
    expect(location.pathname).toBe('/isard-admin/identity_providers');
    const preview = await (await call(server, `${A}/previews/${location.searchParams.get('preview')}`, { token: admin })).json();
    expect(preview).toMatchObject({ outcome: 'create', role: 'user', group_id: 'default-students-1a', identity: { uid: 'nid-student1', username: 'student1', name: 'Sam Student', groups: ['students'] } });
    expect(await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'student1'))).toHaveLength(0);
  });

  it('signs a teacher in the first time: made from the rule (advanced, Teachers), the session keeps the NameID and SessionIndex', async () => {
    const { location, token } = await samlSignIn(main.id, 'teacher1');
    expect(location).toBe('/login/done');
    const me = await (await call(server, '/api/v3/user', { token })).json();
    expect(me).toMatchObject({ username: 'teacher1', role: 'advanced', group: 'default-teachers', category: 'default' });
    const [user] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'teacher1'));
    expect(user).toMatchObject({ provider: 'saml', uid: 'nid-teacher1', name: 'Tina Teacher', email: 'teacher1@idp.test', identityProviderId: main.id });
    const sessions = await server.ctx.db.select().from(schema.sessions).where(eq(schema.sessions.userId, user!.id));
    expect(sessions.at(-1)!.external).toMatchObject({ providerId: main.id, nameId: 'nid-teacher1', nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' });
    expect(sessions.at(-1)!.external!.sessionIndex).toMatch(/^_/);
    // The second sign-in finds the same account.
    const again = await samlSignIn(main.id, 'teacher1');
    expect(again.location).toBe('/login/done');
    expect(await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'teacher1'))).toHaveLength(1);
  });

  it('refuses someone no rule matches (unmatched = refuse) with its code', async () => {
    const { location } = await samlSignIn(main.id, 'outsider1');
    expect(location).toBe('/login?error=identity_not_allowed');
  });

  it('refuses a Response changed after it was signed', async () => {
    const { location } = await samlSignIn(main.id, 'student1', 'tamper');
    expect(location).toBe('/login?error=identity_sign_in_failed');
    expect(warned('signature')).toBe(true);
    expect(await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'student1'))).toHaveLength(0);
  });

  it('refuses a Response without any signature', async () => {
    const { location } = await samlSignIn(main.id, 'student1', 'unsigned');
    expect(location).toBe('/login?error=identity_sign_in_failed');
    expect(warned('signature')).toBe(true);
  });

  it('refuses an assertion for another audience', async () => {
    const { location } = await samlSignIn(main.id, 'student1', 'audience');
    expect(location).toBe('/login?error=identity_sign_in_failed');
    expect(warned('audience')).toBe(true);
  });

  it('refuses an expired assertion (beyond the clock allowance)', async () => {
    const { location } = await samlSignIn(main.id, 'student1', 'expired');
    expect(location).toBe('/login?error=identity_sign_in_failed');
    expect(warned('expired')).toBe(true);
  });

  it('takes an IdP clock a minute ahead (within the allowance), refuses one ten minutes ahead', async () => {
    expect((await samlSignIn(main.id, 'teacher1', 'skewed')).location).toBe('/login/done');
    const from = logLines.length;
    expect((await samlSignIn(main.id, 'teacher1', 'future')).location).toBe('/login?error=identity_sign_in_failed');
    expect(warned('expired', from) || warned('not-yet-valid', from)).toBe(true);
  });

  it('starts a sign-in at the original\'s address with the first SAML provider', async () => {
    const res = await fetch(`${server.url}/authentication/saml/login`, manual);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')!.startsWith(`${idp.url}/sso?SAMLRequest=`)).toBe(true);
    expect(res.headers.get('location')).toContain('&Signature=');
  });

  it('refuses a Response that answers no request of ours, or none at all', async () => {
    expect((await samlSignIn(main.id, 'student1', 'unknown-request')).location).toBe('/login?error=identity_sign_in_failed');
    expect(warned('unknown-request')).toBe(true);
    expect((await samlSignIn(main.id, 'student1', 'unsolicited')).location).toBe('/login?error=identity_sign_in_failed');
    expect(warned('unsolicited')).toBe(true);
    expect(await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'student1'))).toHaveLength(0);
  });

  it('takes an assertion once: the same Response again is refused', async () => {
    const first = await samlSignIn(main.id, 'student1');
    expect(first.location).toBe('/login/done');
    const me = await (await call(server, '/api/v3/user', { token: first.token })).json();
    expect(me).toMatchObject({ username: 'student1', role: 'user', group: 'default-students-1a' });
    const replay = await postAcs(first.acs, first.samlResponse);
    expect(replay.headers.get('location')).toBe('/login?error=identity_sign_in_failed');
    expect(replay.headers.get('set-cookie') ?? '').not.toContain('authorization=');
    expect(warned('replayed')).toBe(true);
  });

  it('refuses an assertion meant for another provider, signed by another IdP key', async () => {
    const other = await createProvider('Other IdP', { metadata_url: otherIdp.metadataUrl });
    const got = await idpResponse(`${server.url}/authentication/login?provider=saml&provider_id=${other.id}`, 'teacher1');
    expect(got.acs).toBe(other.callback_url);
    // Posted to the first provider's ACS: not its IdP's key (nor its audience, nor its request).
    const res = await postAcs(main.callback_url, got.samlResponse);
    expect(res.headers.get('location')).toBe('/login?error=identity_sign_in_failed');
    expect(warned('signature')).toBe(true);
    // And one from the same IdP, for a second provider of it: not our audience.
    const twin = await createProvider('Twin IdP', { metadata_url: idp.metadataUrl });
    const twinGot = await idpResponse(`${server.url}/authentication/login?provider=saml&provider_id=${twin.id}`, 'teacher1');
    const cross = await postAcs(main.callback_url, twinGot.samlResponse);
    expect(cross.headers.get('location')).toBe('/login?error=identity_sign_in_failed');
    expect(warned('audience')).toBe(true);
    // Where it belongs, it signs in.
    expect((await postAcs(other.callback_url, got.samlResponse)).headers.get('location')).toBe('/login/done');
  });

  it('sends the browser back with identity_provider_unavailable when the IdP metadata cannot be fetched; local accounts still sign in', async () => {
    const down = await createProvider('Down IdP', { metadata_url: 'http://127.0.0.1:1/metadata' });
    const res = await fetch(`${server.url}/authentication/login?provider=saml&provider_id=${down.id}`, manual);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?error=identity_provider_unavailable');
    expect((await login(server, 'user')).res.status).toBe(200);
  });

  it('refuses bad input on the ACS with a catalogue code, and a Response that is not one', async () => {
    const empty = await fetch(main.callback_url, { method: 'POST', body: new URLSearchParams({}) });
    expect(empty.status).toBe(400);
    expect((await empty.json()).description_code).toBeTruthy();
    const junk = await postAcs(main.callback_url, Buffer.from('<not-saml/>').toString('base64'));
    expect(junk.headers.get('location')).toBe('/login?error=identity_sign_in_failed');
  });

  it('offers the IdP logout on sign-out; the IdP ends its session and answers our SLO, which leads to /login', async () => {
    const { token } = await samlSignIn(main.id, 'teacher1');
    expect((await (await fetch(`${idp.url}/sessions`)).json()) as string[]).toContain('teacher1');
    const out = await fetch(`${server.url}/authentication/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    const { redirect } = (await out.json()) as { redirect?: string };
    expect(redirect?.startsWith(`${idp.url}/slo?SAMLRequest=`)).toBe(true);
    expect(redirect).toContain('Signature=');
    const atIdp = await fetch(redirect!, manual);
    expect(atIdp.status).toBe(303);
    const back = atIdp.headers.get('location')!;
    expect(back.startsWith(`${server.url}/authentication/saml/slo/${main.id}?SAMLResponse=`)).toBe(true);
    const done = await fetch(back, manual);
    expect(done.headers.get('location')).toBe('/login');
    expect((await (await fetch(`${idp.url}/sessions`)).json()) as string[]).not.toContain('teacher1');
  });

  it('ends the person\'s sessions here when the IdP sends a LogoutRequest, and answers a signed LogoutResponse', async () => {
    const { token } = await samlSignIn(main.id, 'student1');
    expect((await call(server, '/api/v3/user', { token })).status).toBe(200);
    const { url } = (await (await fetch(`${idp.url}/idp-logout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'student1' }) })).json()) as { url: string };
    expect(url.startsWith(`${server.url}/authentication/saml/slo/${main.id}?SAMLRequest=`)).toBe(true);
    const res = await fetch(url, manual);
    expect(res.status).toBe(303);
    const answer = res.headers.get('location')!;
    expect(answer.startsWith(`${idp.url}/slo?SAMLResponse=`)).toBe(true);
    expect((await call(server, '/api/v3/user', { token })).status).toBe(401);
    const [student] = await server.ctx.db.select().from(schema.users).where(eq(schema.users.username, 'student1'));
    const audits = await server.ctx.db.select().from(schema.auditLog).where(eq(schema.auditLog.objectId, student!.id));
    expect(audits.some((a) => a.action === 'auth.sign_out' && JSON.stringify(a.detail).includes('identity_provider'))).toBe(true);
    // The IdP checks our answer's signature.
    expect(await (await fetch(answer)).text()).toContain('idp-logout-done');
    // A LogoutRequest with its signature taken off is refused (nothing ends).
    const again = await samlSignIn(main.id, 'student1');
    const signed = (await (await fetch(`${idp.url}/idp-logout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'student1' }) })).json()) as { url: string };
    const unsigned = signed.url.replace(/&Signature=[^&]*/, '');
    expect((await fetch(unsigned, manual)).headers.get('location')).toBe('/login');
    expect((await call(server, '/api/v3/user', { token: again.token })).status).toBe(200);
  });

  it('takes the IdP\'s LogoutRequest by the HTTP-POST binding too', async () => {
    const { token } = await samlSignIn(main.id, 'teacher1');
    const made = (await (await fetch(`${idp.url}/idp-logout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'teacher1', binding: 'post' }) })).json()) as { url: string; SAMLRequest: string };
    expect(made.url).toBe(`${server.url}/authentication/saml/slo/${main.id}`);
    const res = await fetch(made.url, { method: 'POST', body: new URLSearchParams({ SAMLRequest: made.SAMLRequest }), ...manual });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')!.startsWith(`${idp.url}/slo?SAMLResponse=`)).toBe(true);
    expect((await call(server, '/api/v3/user', { token })).status).toBe(401);
  });

  it('reads the IdP metadata from its text when no address is given', async () => {
    const xml = await (await fetch(idp.metadataUrl)).text();
    const fromFile = await createProvider('IdP from a file', { metadata_xml: xml });
    const { location, token } = await samlSignIn(fromFile.id, 'teacher1');
    expect(location).toBe('/login/done');
    expect((await (await call(server, '/api/v3/user', { token })).json()).username).toBe('teacher1');
    // Metadata that is not an IdP's: unavailable, said so.
    const broken = await createProvider('Broken metadata', { metadata_xml: '<nothing/>' });
    const res = await fetch(`${server.url}/authentication/login?provider=saml&provider_id=${broken.id}`, manual);
    expect(res.headers.get('location')).toBe('/login?error=identity_provider_unavailable');
  });

  it('logs no assertion, no key and no NameID', () => {
    const log = logLines.join('\n');
    expect(log).toContain('SAML response refused');
    expect(responses.length).toBeGreaterThan(5);
    for (const r of responses) expect(log).not.toContain(r.slice(0, 60));
    expect(log).not.toContain('PRIVATE KEY');
    expect(log).not.toContain('BEGIN CERTIFICATE');
    expect(log).not.toContain('nid-teacher1');
    expect(log).not.toContain('SAMLResponse=');
    expect(log).not.toContain('SAMLRequest=');
    expect(log).not.toContain('Assertion');
  });
});

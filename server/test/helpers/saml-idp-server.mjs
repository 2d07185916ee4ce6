// A SAML 2.0 identity provider for the tests, in its own process, on samlify's IdP side: its metadata, a sign-in
// page (user name and password) for a few accounts with attributes, signed Responses (the message and the
// assertion) by the HTTP-POST binding, and single logout both ways. It trusts any SP whose entity id is the address
// of its metadata (as ours is), read when its AuthnRequest comes.
//
//   node saml-idp-server.mjs --key idp.key --cert idp.crt [--port 0]
// prints one line {"url": "http://127.0.0.1:<port>"} once it listens; SIGTERM ends it.
//
// Test knobs (fields of the sign-in form, never offered by the page): mode=tamper (the signed XML changed after
// signing), audience (another audience), expired (times in the past), unsigned (no signature at all),
// unknown-request (InResponseTo names no request), unsolicited (no InResponseTo), skewed / future (the IdP's
// clock one / ten minutes ahead).
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
// CommonJS packages: their exports as one object (some of samlify's are getters ESM cannot name).
import samlify from 'samlify';
import validator from '@authenio/samlify-node-xmllint';

const { values: args } = parseArgs({ options: { key: { type: 'string' }, cert: { type: 'string' }, port: { type: 'string', default: '0' } } });
const key = readFileSync(args.key, 'utf8');
const cert = readFileSync(args.cert, 'utf8');

samlify.setSchemaValidator(validator);
const { Constants, SamlLib, Extractor, Utility } = samlify;

/** The accounts: password, NameID (persistent) and attributes. */
const ACCOUNTS = {
  teacher1: { password: 'teacher-pass', nameId: 'nid-teacher1', attrs: { uid: ['teacher1'], cn: ['Tina Teacher'], mail: ['teacher1@idp.test'], memberOf: ['teachers', 'staff'] } },
  student1: { password: 'student-pass', nameId: 'nid-student1', attrs: { uid: ['student1'], cn: ['Sam Student'], mail: ['student1@idp.test'], memberOf: ['students'] } },
  outsider1: { password: 'outsider-pass', nameId: 'nid-outsider1', attrs: { uid: ['outsider1'], cn: ['Olga Outsider'], mail: ['outsider1@idp.test'], memberOf: ['visitors'] } },
};
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

let base = '';
let idp;
/** SP entities by entity id (their metadata fetched from it). */
const sps = new Map();
/** Sign-ins waiting for the form: id → { requestInfo, sp, relayState }. */
const pending = new Map();
/** IdP sessions by cookie: id → { username, sessionIndex, sp (entity id) }. */
const sessions = new Map();

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const newId = () => `_${randomBytes(16).toString('hex')}`;

async function spOf(entityId) {
  if (!sps.has(entityId)) {
    const res = await fetch(entityId, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`SP metadata: ${res.status}`);
    const metadata = await res.text();
    sps.set(entityId, samlify.ServiceProvider({ metadata, wantMessageSigned: true, wantLogoutResponseSigned: true, wantLogoutRequestSigned: true }));
  }
  return sps.get(entityId);
}

/** The issuer of a redirect-binding message, read before its signature can be checked (it says whose key). */
function issuerOf(encoded) {
  const xml = Utility.inflateString(encoded);
  return Extractor.extract(xml, [{ key: 'issuer', localPath: [['AuthnRequest', 'Issuer'], ['LogoutRequest', 'Issuer'], ['LogoutResponse', 'Issuer']], attributes: [] }]).issuer;
}

/** The raw query's signed parts, in order. */
function octets(rawQuery, param) {
  const parts = new Map(rawQuery.split('&').map((p) => [p.split('=')[0], p]));
  return [parts.get(param), parts.get('RelayState'), parts.get('SigAlg')].filter(Boolean).join('&');
}

function cookieOf(req) {
  return /(?:^|;\s*)idp_session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
}

function page(res, status, title, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body>${body}</body></html>`);
}

function loginForm(res, id, error = '') {
  page(res, 200, 'Test IdP sign-in', `<main><h1>Test IdP</h1>${error ? `<p role="alert">${esc(error)}</p>` : ''}
<form method="post" action="${base}/sso/login"><input type="hidden" name="pending" value="${esc(id)}">
<label>User name <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in to the IdP</button></form></main>`);
}

/** The signed Response for `username`, as the auto-submitted form to the SP's ACS. */
async function respond(res, username, { requestInfo, sp, relayState }, mode = '', sessionIndex) {
  const account = ACCOUNTS[username];
  const now = Date.now();
  const expired = mode === 'expired';
  // The IdP's clock ahead of the SP's: by a minute (within an allowance of two) or by ten.
  const ahead = mode === 'skewed' ? 60_000 : mode === 'future' ? 10 * 60_000 : 0;
  const notBefore = new Date(expired ? now - 30 * 60_000 : now - 1000 + ahead).toISOString();
  const notOnOrAfter = new Date(expired ? now - 10 * 60_000 : now + 5 * 60_000 + ahead).toISOString();
  const acs = sp.entityMeta.getAssertionConsumerService(Constants.namespace.binding.post);
  const attributes = Object.entries(account.attrs)
    .map(([name, vals]) => `<saml:Attribute Name="${esc(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${vals.map((v) => `<saml:AttributeValue xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`)
    .join('');
  const authn = `<saml:AuthnStatement AuthnInstant="${new Date(now).toISOString()}" SessionIndex="${esc(sessionIndex)}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`;
  const made = await idp.createLoginResponse(sp, requestInfo, 'post', {}, {
    relayState,
    customTagReplacement: (template) => {
      const id = newId();
      const context = SamlLib.replaceTagsByValue(template.replace('{AuthnStatement}', authn).replace('{AttributeStatement}', `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`), {
        ID: id,
        AssertionID: newId(),
        Destination: acs,
        Audience: mode === 'audience' ? 'https://elsewhere.example/sp' : sp.entityMeta.getEntityID(),
        SubjectRecipient: acs,
        Issuer: idp.entityMeta.getEntityID(),
        IssueInstant: new Date(now).toISOString(),
        StatusCode: Constants.StatusCode.Success,
        ConditionsNotBefore: notBefore,
        ConditionsNotOnOrAfter: notOnOrAfter,
        SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
        NameIDFormat: PERSISTENT,
        NameID: account.nameId,
        InResponseTo: mode === 'unknown-request' ? newId() : mode === 'unsolicited' ? undefined : requestInfo.extract.request.id,
      });
      return { id, context };
    },
  });
  let samlResponse = made.context;
  if (mode === 'unsigned') {
    // The SP wants signatures: take every one out.
    samlResponse = Buffer.from(Buffer.from(samlResponse, 'base64').toString('utf8').replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '')).toString('base64');
  }
  if (mode === 'tamper') {
    // Signed as the student; changed afterwards to say teacher.
    samlResponse = Buffer.from(Buffer.from(samlResponse, 'base64').toString('utf8').replace('>students<', '>teachers<')).toString('base64');
  }
  page(res, 200, 'Signing in…', `<form method="post" action="${esc(made.entityEndpoint)}" id="saml">
<input type="hidden" name="SAMLResponse" value="${esc(samlResponse)}">${relayState ? `<input type="hidden" name="RelayState" value="${esc(relayState)}">` : ''}
<noscript><button type="submit">Continue</button></noscript></form><script>document.getElementById('saml').submit()</script>`);
}

async function readBody(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  const type = req.headers['content-type'] ?? '';
  return type.includes('json') ? JSON.parse(body || '{}') : Object.fromEntries(new URLSearchParams(body));
}

async function handle(req, res) {
  const url = new URL(req.url, base);
  const rawQuery = req.url.split('?')[1] ?? '';
  const query = Object.fromEntries(url.searchParams);
  if (req.method === 'GET' && url.pathname === '/metadata') {
    res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' });
    return res.end(idp.getMetadata());
  }
  if (req.method === 'GET' && url.pathname === '/sso') {
    const sp = await spOf(issuerOf(query.SAMLRequest));
    const requestInfo = await idp.parseLoginRequest(sp, 'redirect', { query, octetString: octets(rawQuery, 'SAMLRequest') });
    const flow = { requestInfo, sp, relayState: query.RelayState };
    const session = sessions.get(cookieOf(req));
    if (session) return respond(res, session.username, flow, '', session.sessionIndex);
    const id = newId();
    pending.set(id, flow);
    return loginForm(res, id);
  }
  if (req.method === 'POST' && url.pathname === '/sso/login') {
    const form = await readBody(req);
    const flow = pending.get(form.pending);
    if (!flow) return page(res, 400, 'Expired', '<p>That sign-in is over.</p>');
    const account = ACCOUNTS[form.username];
    if (!account || account.password !== form.password) return loginForm(res, form.pending, 'Wrong user name or password');
    pending.delete(form.pending);
    const sid = randomBytes(16).toString('hex');
    const sessionIndex = newId();
    sessions.set(sid, { username: form.username, sessionIndex, sp: flow.sp.entityMeta.getEntityID() });
    res.setHeader('set-cookie', `idp_session=${sid}; Path=/; HttpOnly; SameSite=Lax`);
    return respond(res, form.username, flow, form.mode ?? '', sessionIndex);
  }
  if (req.method === 'GET' && url.pathname === '/slo') {
    const param = query.SAMLRequest ? 'SAMLRequest' : 'SAMLResponse';
    const sp = await spOf(issuerOf(query[param]));
    if (param === 'SAMLResponse') {
      // The SP's answer to our logout request.
      await idp.parseLogoutResponse(sp, 'redirect', { query, octetString: octets(rawQuery, param) });
      return page(res, 200, 'Signed out', '<p id="idp-logout-done">The SP ended its session.</p>');
    }
    const info = await idp.parseLogoutRequest(sp, 'redirect', { query, octetString: octets(rawQuery, param) });
    // End this browser's session and every session of that person.
    for (const [sid, s] of sessions) if (ACCOUNTS[s.username].nameId === info.extract.nameID || sid === cookieOf(req)) sessions.delete(sid);
    const answer = idp.createLogoutResponse(sp, info, 'redirect', query.RelayState ? { relayState: query.RelayState } : {});
    res.writeHead(303, { location: answer.context, 'set-cookie': 'idp_session=; Path=/; Max-Age=0' });
    return res.end();
  }
  if (req.method === 'GET' && url.pathname === '/session') {
    const s = sessions.get(cookieOf(req));
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ username: s?.username ?? null }));
  }
  if (req.method === 'GET' && url.pathname === '/sessions') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify([...sessions.values()].map((s) => s.username)));
  }
  if (req.method === 'POST' && url.pathname === '/idp-logout') {
    // The IdP ends a person's session and tells the SP: its LogoutRequest as the SP's redirect address.
    const { username, binding } = await readBody(req);
    const entry = [...sessions.entries()].reverse().find(([, s]) => s.username === username); // the latest
    if (!entry) {
      res.writeHead(404);
      return res.end();
    }
    const [sid, s] = entry;
    sessions.delete(sid);
    const sp = await spOf(s.sp);
    const user = { logoutNameID: ACCOUNTS[username].nameId, sessionIndex: s.sessionIndex };
    res.writeHead(200, { 'content-type': 'application/json' });
    if (binding === 'post') {
      // By the HTTP-POST binding: the SP's SLO address and the signed message to post there.
      const made = idp.createLogoutRequest(sp, 'post', user);
      return res.end(JSON.stringify({ url: made.entityEndpoint, SAMLRequest: made.context }));
    }
    return res.end(JSON.stringify({ url: idp.createLogoutRequest(sp, 'redirect', user).context }));
  }
  res.writeHead(404);
  res.end();
}

const server = createServer((req, res) => {
  handle(req, res).catch((err) => {
    process.stderr.write(`saml-idp: ${err?.message ?? err}\n`);
    if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(`refused: ${err?.message ?? err}`);
  });
});
server.listen(Number(args.port), '127.0.0.1', () => {
  base = `http://127.0.0.1:${server.address().port}`;
  idp = samlify.IdentityProvider({
    entityID: `${base}/metadata`,
    privateKey: key,
    signingCert: cert,
    wantAuthnRequestsSigned: true,
    wantLogoutRequestSigned: true,
    wantLogoutResponseSigned: true,
    requestSignatureAlgorithm: Constants.algorithms.signature.RSA_SHA256,
    nameIDFormat: [PERSISTENT],
    singleSignOnService: [{ Binding: Constants.namespace.binding.redirect, Location: `${base}/sso` }],
    singleLogoutService: [{ Binding: Constants.namespace.binding.redirect, Location: `${base}/slo` }],
  });
  process.stdout.write(`${JSON.stringify({ url: base })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

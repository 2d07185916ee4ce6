// A real OpenID provider for the tests, in its own process: the `oidc-provider` library on 127.0.0.1 (a free
// port), one static confidential client, three accounts, its own sign-in page (a name and password form) and
// RP-initiated logout. Plain Node; started by oidc-idp.ts (startOidcIdp), which reads the first line it prints:
//   listening http://127.0.0.1:<port>
// Configuration from the environment (the test generates the secrets):
//   IDP_CLIENT_ID, IDP_CLIENT_SECRET   the portal's client
//   IDP_REDIRECT_PREFIX                redirect URIs allowed: this prefix then a provider id (the id is made after the IdP is up)
//   IDP_POST_LOGOUT_URIS               post-logout redirect URIs, separated by spaces
//   IDP_PASSWORD                       every account's password
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is required`);
    process.exit(2);
  }
  return v;
};
const clientId = env('IDP_CLIENT_ID');
const clientSecret = env('IDP_CLIENT_SECRET');
const redirectPrefix = env('IDP_REDIRECT_PREFIX');
const postLogoutUris = env('IDP_POST_LOGOUT_URIS').split(/\s+/).filter(Boolean);
const password = env('IDP_PASSWORD');

/** The people: a teacher (group teachers), a student (group students), someone in no mapped group. */
const ACCOUNTS = {
  'ada-teacher': { name: 'Ada Teacher', email: 'ada.teacher@idp.test', groups: ['teachers', 'staff'] },
  'sam-student': { name: 'Sam Student', email: 'sam.student@idp.test', groups: ['students'] },
  'olly-outsider': { name: 'Olly Outsider', email: 'olly@idp.test', groups: ['visitors'] },
};

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title, body) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title>` +
  `<style>body{font-family:sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;width:100%;margin:.4rem 0}input,button{padding:.5rem;box-sizing:border-box}</style></head>` +
  `<body><h1>${esc(title)}</h1>${body}</body></html>`;

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [`${redirectPrefix}registered-later`],
      post_logout_redirect_uris: postLogoutUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  pkce: { required: () => true },
  scopes: ['openid', 'profile', 'email', 'groups'],
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'], groups: ['groups'] },
  async findAccount(_ctx, id) {
    const account = ACCOUNTS[id];
    if (!account) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, preferred_username: id, name: account.name, email: account.email, email_verified: true, groups: account.groups }),
    };
  },
  // A first-party client: the requested scopes are granted without a consent page.
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid profile email groups');
    await grant.save();
    return grant;
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: async (ctx, form) => {
        ctx.body = page('Sign out of the test IdP', `${form}<button type="submit" form="op.logoutForm" name="logout" value="yes" data-testid="idp-logout">Yes, sign me out</button>`);
      },
      postLogoutSuccessSource: async (ctx) => {
        ctx.body = page('Signed out of the test IdP', '<p>You are signed out.</p>');
      },
    },
  },
  renderError: async (ctx, out) => {
    ctx.type = 'html';
    ctx.body = page('Test IdP error', `<pre>${esc(out.error)}: ${esc(out.error_description ?? '')}</pre>`);
  },
});
// The portal's provider ids are made after this IdP is up: any id under the portal's callback prefix is allowed.
provider.Client.prototype.redirectUriAllowed = function (uri) {
  return typeof uri === 'string' && uri.startsWith(redirectPrefix) && /^[A-Za-z0-9-]+$/.test(uri.slice(redirectPrefix.length));
};

const readForm = (req) =>
  new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
      if (body.length > 10_000) req.destroy();
    });
    req.on('end', () => resolve(new URLSearchParams(body)));
    req.on('error', reject);
  });

const loginForm = (uid, message = '') =>
  page(
    'Test IdP sign-in',
    `${message ? `<p role="alert" data-testid="idp-error">${esc(message)}</p>` : ''}<form method="post" action="/interaction/${esc(uid)}/login" autocomplete="off">` +
      '<label>User name<input name="login" data-testid="idp-login" required></label>' +
      '<label>Password<input name="password" type="password" data-testid="idp-password" required></label>' +
      '<button type="submit" data-testid="idp-submit">Sign in</button></form>',
  );

const callback = provider.callback();
server.on('request', async (req, res) => {
  const m = /^\/interaction\/([^/?]+)(\/login)?(?:\?|$)/.exec(req.url ?? '');
  if (!m) return callback(req, res);
  try {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name !== 'login') {
      // Consent is granted by loadExistingGrant; any other prompt finishes as it is.
      return await provider.interactionFinished(req, res, {}, { mergeWithLastSubmission: true });
    }
    if (req.method === 'POST' && m[2]) {
      const form = await readForm(req);
      const login = form.get('login') ?? '';
      if (ACCOUNTS[login] && form.get('password') === password) {
        return await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(loginForm(m[1], 'Wrong user name or password'));
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(loginForm(m[1]));
  } catch (err) {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(`interaction failed: ${err.message}`);
  }
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
console.log(`listening ${issuer}`);

import { describe, expect, it } from 'vitest';
import type { TIdentityProvider } from '@vdi/contracts';
import { ZIdentityProviderBody } from '@vdi/contracts';
import { ALL, bodyOf, bodyOfProvider, draftOf, roleAbove, settingsOf } from './identity-draft';

const stored: TIdentityProvider = {
  id: 'p1',
  kind: 'ldap',
  name: 'School directory',
  logo: '',
  category_id: 'default',
  enabled: true,
  rules: [{ attribute: 'memberOf', value: 'cn=teachers,*', group_id: 'default-teachers', role: 'advanced' }],
  unmatched: 'register',
  update_on_signin: true,
  max_role: 'advanced',
  // An older row without group_filter nor every attribute: the kind's defaults fill them.
  settings: { url: 'ldaps://ldap.example.org', start_tls: false, ca: '', bind_dn: '', user_base: 'ou=people,dc=example,dc=org', user_filter: '(uid={username})', group_base: '', attributes: { username: 'uid' } },
  secret_set: true,
  callback_url: null,
  metadata_url: null,
  created_at: '2026-11-29T00:00:00.000Z',
};

describe('the sign-in provider form draft', () => {
  it('saves a stored provider again without its secret (kept), with its rules in order and the contract satisfied', () => {
    const body = bodyOfProvider(stored, { enabled: false });
    expect(body).not.toHaveProperty('secret');
    expect(body).toMatchObject({ kind: 'ldap', enabled: false, category_id: 'default', unmatched: 'register', update_on_signin: true, rules: stored.rules });
    expect(body.settings).toMatchObject({ group_filter: '(member={dn})', attributes: { username: 'uid', name: 'cn', groups: 'memberOf' } });
    expect(ZIdentityProviderBody.safeParse(body).success).toBe(true);
  });

  it('sends a typed secret, and an empty one only to remove the stored one', () => {
    const d = draftOf(stored);
    expect(bodyOf({ ...d, secret: 'bind-pass' }).secret).toBe('bind-pass');
    expect(bodyOf({ ...d, secret: 'ignored', clearSecret: true }).secret).toBe('');
    expect(bodyOf(d)).not.toHaveProperty('secret');
  });

  it('"all organisations" is a null category; the settings sent are those of the chosen kind', () => {
    const d = { ...draftOf(null), category: ALL, kind: 'oidc' as const, name: ' Lab ' };
    d.settings.oidc = { ...d.settings.oidc, issuer: 'https://login.example.org', client_id: 'vdi' };
    const body = bodyOf(d);
    expect(body).toMatchObject({ kind: 'oidc', category_id: null, name: 'Lab', settings: { issuer: 'https://login.example.org', scopes: 'openid profile email' } });
    expect(body.settings).not.toHaveProperty('url');
    expect(ZIdentityProviderBody.safeParse(body).success).toBe(true);
  });

  it('orders roles from user up to admin', () => {
    expect(roleAbove('admin', 'advanced')).toBe(true);
    expect(roleAbove('manager', 'advanced')).toBe(true);
    expect(roleAbove('advanced', 'advanced')).toBe(false);
    expect(roleAbove('user', 'advanced')).toBe(false);
    expect(settingsOf({ kind: 'saml', settings: {} })).toMatchObject({ metadata_url: '', attributes: { username: 'uid' } });
  });
});

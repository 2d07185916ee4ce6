import { describe, expect, it } from 'vitest';
import { personOf, safeMessage } from './oidc';

const NAMES = { username: 'preferred_username', name: 'name', email: 'email', photo: 'picture', groups: 'groups' };

describe('the person from OpenID claims', () => {
  it('takes the provider’s claim names; the uid is always `sub`', () => {
    const p = personOf({ sub: 'abc-1', preferred_username: 'ada', name: 'Ada L', email: 'ada@x.test', picture: 'https://x.test/a.png', groups: ['teachers', 'staff'], hd: 'x.test' }, NAMES);
    expect(p).toMatchObject({ uid: 'abc-1', username: 'ada', name: 'Ada L', email: 'ada@x.test', photo: 'https://x.test/a.png', groups: ['teachers', 'staff'] });
    expect(p.attributes.hd).toEqual(['x.test']);
  });

  it('reads groups sent as one string, and other claim names (Entra, Google)', () => {
    expect(personOf({ sub: 's', roles: 'a, b c' }, { ...NAMES, groups: 'roles' }).groups).toEqual(['a', 'b', 'c']);
    const google = personOf({ sub: '1098', email: 'sam@school.test', email_verified: true }, { ...NAMES, username: 'email' });
    expect(google.username).toBe('sam@school.test');
    expect(google.groups).toEqual([]);
    expect(google.attributes.email_verified).toEqual(['true']);
  });

  it('falls back to preferred_username, the e-mail, then sub for a user name; objects are no values', () => {
    expect(personOf({ sub: 's1', email: 'e@x.test' }, { ...NAMES, username: 'upn' }).username).toBe('e@x.test');
    expect(personOf({ sub: 's2' }, { ...NAMES, username: 'upn' }).username).toBe('s2');
    expect(personOf({ sub: 's3', address: { street: 'x' } }, NAMES).attributes.address).toBeUndefined();
  });
});

describe('messages of the library’s errors', () => {
  it('keep the fixed texts and never the data of a cause', () => {
    const cause = Object.assign(new Error('unexpected ID Token "nonce" claim value'), { claims: { nonce: 'secret-nonce' } });
    const err = Object.assign(new Error('unexpected JWT claim value encountered', { cause }), { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' });
    const text = safeMessage(err);
    expect(text).toContain('nonce');
    expect(text).not.toContain('secret-nonce');
  });
});

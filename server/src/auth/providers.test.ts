import { describe, expect, it } from 'vitest';
import { listedProviders } from './providers';

describe('listedProviders', () => {
  it('lists "form" for local or LDAP sign-in, never those two themselves, then the external ones', () => {
    expect(listedProviders()).toEqual(['form']);
    expect(listedProviders(['local', 'ldap', 'saml'])).toEqual(['form', 'saml']);
    expect(listedProviders(['google'])).toEqual(['google']);
    expect(listedProviders([])).toEqual([]);
  });
});

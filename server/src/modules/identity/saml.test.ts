import { describe, expect, it } from 'vitest';
import { ZSamlSettings } from '@vdi/contracts';
import { signedOctets, type SamlAssertion } from '../../identity/saml';
import { identityOf } from './saml';

const assertion = (over: Partial<SamlAssertion> = {}): SamlAssertion => ({
  assertionId: '_a',
  inResponseTo: '_r',
  nameId: 'nid-1',
  nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  sessionIndex: '_s',
  notOnOrAfter: new Date(),
  attributes: { UID: ['jdoe'], cn: ['Jane Doe'], mail: ['jane@example.org'], memberOf: ['teachers', '', 'staff'] },
  ...over,
});

describe('the person a SAML assertion names', () => {
  const settings = ZSamlSettings.parse({ metadata_xml: '<x/>' });

  it('is the NameID, with the configured attributes (any case; empty values left out)', () => {
    expect(identityOf(settings, assertion())).toMatchObject({ uid: 'nid-1', username: 'jdoe', name: 'Jane Doe', email: 'jane@example.org', groups: ['teachers', 'staff'] });
  });

  it('falls back to the user name for a transient NameID, and to the NameID for a missing user name', () => {
    expect(identityOf(settings, assertion({ nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient' })).uid).toBe('jdoe');
    expect(identityOf(settings, assertion({ attributes: {} }))).toMatchObject({ uid: 'nid-1', username: 'nid-1', groups: [] });
  });
});

describe('the octets a redirect binding signs', () => {
  it('are the message, RelayState and SigAlg as sent, in that order, whatever else the query has', () => {
    expect(signedOctets('Signature=s%2B&SigAlg=a%3Ab&x=1&SAMLRequest=q%3D&RelayState=r', 'SAMLRequest')).toBe('SAMLRequest=q%3D&RelayState=r&SigAlg=a%3Ab');
    expect(signedOctets('SAMLResponse=q&SigAlg=a', 'SAMLResponse')).toBe('SAMLResponse=q&SigAlg=a');
  });
});

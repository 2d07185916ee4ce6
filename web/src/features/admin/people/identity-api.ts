import { z } from 'zod';
import {
  ZIdentityPreview,
  ZIdentityProvider,
  type TIdentityKind,
  type TIdentityProvider,
  type TIdentityProviderBody,
  type TLdapSettings,
  type TOidcSettings,
  type TSamlSettings,
} from '@vdi/contracts';
import { api } from '../../../lib/api';
import { queryClient } from '../../../lib/queries';

const id = (s: string) => encodeURIComponent(s);

export const IDENTITY_KEY = ['admin', 'identity-providers'] as const;
export const identityProvidersQuery = { queryKey: IDENTITY_KEY, queryFn: () => api.get('/admin/identity-providers', z.array(ZIdentityProvider)) } as const;
export const refreshIdentity = () => queryClient.invalidateQueries({ queryKey: IDENTITY_KEY });

export const createProvider = (b: TIdentityProviderBody) => api.post('/admin/identity-providers', b, ZIdentityProvider);
export const updateProvider = (providerId: string, b: TIdentityProviderBody) => api.put(`/admin/identity-providers/${id(providerId)}`, b, ZIdentityProvider);
export const deleteProvider = (providerId: string) => api.delete(`/admin/identity-providers/${id(providerId)}`);
const ZTestAnswer = z.object({ preview: ZIdentityPreview.optional(), url: z.string().optional() });
/** LDAP: an account's name and password → the preview; OIDC/SAML: {} → the provider's address to open. */
export const testProvider = (providerId: string, body: { username: string; password: string } | Record<string, never>) =>
  api.post(`/admin/identity-providers/${id(providerId)}/test`, body, ZTestAnswer, { timeoutMs: 60_000 });
export const previewOf = (previewId: string) => api.get(`/admin/identity-providers/previews/${id(previewId)}`, ZIdentityPreview);

/** The kinds' names (protocol names, the same in every language). */
export const KIND_LABEL: Record<TIdentityKind, string> = { ldap: 'LDAP', oidc: 'OpenID Connect', saml: 'SAML' };

/** The settings of a new provider of each kind (the contracts' defaults). */
export const DEFAULT_SETTINGS: { ldap: TLdapSettings; oidc: TOidcSettings; saml: TSamlSettings } = {
  ldap: {
    url: '',
    start_tls: false,
    ca: '',
    bind_dn: '',
    user_base: '',
    user_filter: '(uid={username})',
    group_base: '',
    group_filter: '(member={dn})',
    attributes: { username: 'uid', name: 'cn', email: 'mail', photo: '', groups: 'memberOf' },
  },
  oidc: {
    issuer: '',
    client_id: '',
    scopes: 'openid profile email',
    attributes: { username: 'preferred_username', name: 'name', email: 'email', photo: 'picture', groups: 'groups' },
  },
  saml: {
    metadata_url: '',
    metadata_xml: '',
    attributes: { username: 'uid', name: 'cn', email: 'mail', photo: '', groups: 'memberOf' },
  },
};

/** A stored provider's settings completed with its kind's defaults (older rows may lack a field). */
export function settingsOf(p: Pick<TIdentityProvider, 'kind' | 'settings'>) {
  const base = DEFAULT_SETTINGS[p.kind as TIdentityKind] as Record<string, unknown>;
  const s = p.settings as Record<string, unknown>;
  return { ...base, ...s, attributes: { ...(base.attributes as object), ...((s.attributes as object | undefined) ?? {}) } };
}

/** The largest logo accepted (the contract's limit is 200 000 characters of data: URL, about 146 kB of image). */
export const LOGO_MAX_BYTES = 140 * 1024;

/** Reads an image file as a data: URL, or answers why not ('type' | 'size'). */
export function logoDataUrl(file: File): Promise<{ url: string } | { error: 'type' | 'size' }> {
  if (!/^image\/(png|jpeg|gif|svg\+xml|webp)$/.test(file.type)) return Promise.resolve({ error: 'type' });
  if (file.size > LOGO_MAX_BYTES) return Promise.resolve({ error: 'size' });
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({ url: String(reader.result) });
    reader.onerror = () => reject(reader.error ?? new Error('read failed'));
    reader.readAsDataURL(file);
  });
}

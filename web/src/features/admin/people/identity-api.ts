import { z } from 'zod';
import { ZIdentityPreview, ZIdentityProvider, type TIdentityProviderBody } from '@vdi/contracts';
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

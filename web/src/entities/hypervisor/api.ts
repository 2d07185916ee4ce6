import { ZAdminHypervisorList, ZPreferredHypervisors, type TAdminHypervisorList, type TPreferredHypervisors } from '@vdi/contracts';
import { api } from '../../lib/api';
import { HANDLES_ERROR } from '../../lib/queries';

/** The hypervisors (admins only): the console's Hypervisors screen, its desktops filter and the preferred-hypervisor pickers share this cache. */
export const HYPERVISORS_KEY = ['admin', 'infra', 'hypervisors'] as const;
export const hypervisorsQuery = { queryKey: HYPERVISORS_KEY, queryFn: (): Promise<TAdminHypervisorList> => api.get('/admin/hypervisors', ZAdminHypervisorList), meta: HANDLES_ERROR } as const;

export type PreferredKind = 'template' | 'deployment';
const preferredPath = (kind: PreferredKind, id: string) => `/admin/hypervisors/preferred/${kind}/${encodeURIComponent(id)}`;
export const preferredKey = (kind: PreferredKind, id: string) => [...HYPERVISORS_KEY, 'preferred', kind, id] as const;
export const preferredQuery = (kind: PreferredKind, id: string) =>
  ({ queryKey: preferredKey(kind, id), queryFn: () => api.get(preferredPath(kind, id), ZPreferredHypervisors), meta: HANDLES_ERROR }) as const;
export const savePreferred = (kind: PreferredKind, id: string, body: TPreferredHypervisors) => api.put(preferredPath(kind, id), body, ZPreferredHypervisors);

/**
 * What the two pickers send: each id once, a host forced is not also listed as favourite (forced
 * hosts are the only ones used, so a favourite among them says nothing), ids of removed hosts dropped.
 */
export function preferredBody(forced: string[], favourite: string[], known: readonly string[]): TPreferredHypervisors {
  const keep = (ids: string[]) => [...new Set(ids)].filter((x) => known.includes(x));
  const f = keep(forced);
  return { forced_hyp: f, favourite_hyp: keep(favourite).filter((x) => !f.includes(x)) };
}

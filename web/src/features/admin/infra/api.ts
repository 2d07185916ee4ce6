import { keepPreviousData } from '@tanstack/react-query';
import {
  ZAdminDashboard,
  ZAdminActionAnswer,
  ZAdminCategory,
  ZAdminCategoryList,
  ZAdminHypervisor,
  ZAdminHypervisorDrained,
  ZAdminHypervisorMarkedDown,
  ZAdminHypervisorHostKey,
  ZAdminHypervisorSshKey,
  ZAdminHypervisorTlsBundle,
  ZAdminJob,
  ZAdminJobList,
  ZAdminStorageCheck,
  ZAdminStorageList,
  ZAdminStoragePools,
  ZAdminStorageRemoved,
  type TAdminHypervisor,
  type TAdminHypervisorList,
  type TAdminHypervisorAdd,
  type TAdminHypervisorHostKey,
  type TAdminHypervisorUpdate,
} from '@vdi/contracts';
import { z } from 'zod';
import { api } from '../../../lib/api';
import { queryClient, HANDLES_ERROR } from '../../../lib/queries';
import { HYPERVISORS_KEY } from '../../../entities/hypervisor/api';

export const INFRA_KEY = ['admin', 'infra'] as const;
/** Query values as strings, leaving out the empty ones. */
const q = (o: Record<string, string | number | boolean | undefined | null>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [k, String(v)]));

/** How often the dashboard and the jobs list read their numbers again. */
export const LIVE_REFRESH_MS = 4_000;

export const dashboardQuery = {
  queryKey: [...INFRA_KEY, 'dashboard'],
  queryFn: () => api.get('/admin/dashboard', ZAdminDashboard),
  refetchInterval: LIVE_REFRESH_MS,
  meta: HANDLES_ERROR,
} as const;

export type StorageParams = { page: number; per_page: number; sort: string; order: 'asc' | 'desc'; search: string; status?: string | null; kind?: string | null };
export const storageQuery = (p: StorageParams) =>
  ({
    queryKey: [...INFRA_KEY, 'storage', p],
    queryFn: () => api.get('/admin/storage', ZAdminStorageList, { query: q(p) }),
    placeholderData: keepPreviousData,
    meta: HANDLES_ERROR,
  }) as const;
/** Every category with the storage pool it maps its desktops' disks to (the console lists them all on one page). */
export const categoryPoolsQuery = {
  queryKey: [...INFRA_KEY, 'category-pools'],
  queryFn: () => api.get('/admin/categories', ZAdminCategoryList, { query: { per_page: '500', sort: 'name', order: 'asc' } }),
  meta: HANDLES_ERROR,
} as const;
/** Maps a category to a pool (`default`: the shared storage folder); answers the category as stored. */
export const setCategoryPool = (categoryId: string, pool: string) => api.put(`/admin/categories/${encodeURIComponent(categoryId)}`, { storage_pool: pool }, ZAdminCategory);
export const poolsQuery = { queryKey: [...INFRA_KEY, 'pools'], queryFn: () => api.get('/admin/storage/pools', ZAdminStoragePools), meta: HANDLES_ERROR } as const;
/** The check walks the whole storage folder: run when asked, not on every visit. */
export const runStorageCheck = () => api.get('/admin/storage/check', ZAdminStorageCheck);
export async function removeOrphans(paths: string[]) {
  const answer = await api.post('/admin/storage/check/remove', { paths }, ZAdminStorageRemoved);
  await queryClient.invalidateQueries({ queryKey: INFRA_KEY });
  return answer;
}

export type JobParams = { page: number; per_page: number; state?: string | null; kind?: string | null; search: string };
export const jobsQuery = (p: JobParams) =>
  ({
    queryKey: [...INFRA_KEY, 'jobs', p],
    queryFn: () => api.get('/admin/jobs', ZAdminJobList, { query: q({ ...p, sort: 'created', order: 'desc' }) }),
    placeholderData: keepPreviousData,
    refetchInterval: LIVE_REFRESH_MS,
    meta: HANDLES_ERROR,
  }) as const;
export async function cancelJob(id: string) {
  const job = await api.delete(`/admin/jobs/${encodeURIComponent(id)}`, ZAdminJob);
  await queryClient.invalidateQueries({ queryKey: [...INFRA_KEY, 'jobs'] });
  return job;
}

export { HYPERVISORS_KEY, hypervisorsQuery } from '../../../entities/hypervisor/api';
export async function updateHypervisor(id: string, body: TAdminHypervisorUpdate) {
  const h = await api.put(`/admin/hypervisors/${encodeURIComponent(id)}`, body, ZAdminHypervisor);
  applyHypervisor(h);
  return h;
}
/** A hypervisor's new numbers (from the live socket or an answer) into the cached list. */
export function applyHypervisor(h: TAdminHypervisor) {
  queryClient.setQueryData<TAdminHypervisorList>(HYPERVISORS_KEY, (list) => {
    if (!list) return list;
    const known = list.items.some((x) => x.id === h.id);
    const items = known ? list.items.map((x) => (x.id === h.id ? h : x)) : [...list.items, h];
    return { items, total: items.length };
  });
}

/** The installation's public SSH key, for the hosts' `authorized_keys`. */
export const sshKeyQuery = { queryKey: [...HYPERVISORS_KEY, 'ssh-key'], queryFn: () => api.get('/admin/hypervisors/ssh-key', ZAdminHypervisorSshKey) } as const;
/** Add: without a fingerprint the host key to confirm; with it, the added host. */
export async function addHypervisor(body: TAdminHypervisorAdd): Promise<TAdminHypervisorHostKey | TAdminHypervisor> {
  const answer = await api.post('/admin/hypervisors', body, z.union([ZAdminHypervisorHostKey, ZAdminHypervisor]));
  if ('id' in answer) applyHypervisor(answer);
  return answer;
}
export async function drainHypervisor(id: string, draining: boolean) {
  const answer = await api.put(`/admin/hypervisors/${encodeURIComponent(id)}/drain`, { draining }, ZAdminHypervisorDrained);
  applyHypervisor(answer.hypervisor);
  return answer;
}
/** The certificates of a qemu+tls host, issued by the installation's CA for `host`. */
export const issueTlsBundle = (host: string) => api.post('/admin/hypervisors/tls-certificate', { host }, ZAdminHypervisorTlsBundle);
/** Marks an offline host down: its desktops stopped, to start on another host. */
export async function markHypervisorDown(id: string) {
  const answer = await api.post(`/admin/hypervisors/${encodeURIComponent(id)}/down`, undefined, ZAdminHypervisorMarkedDown);
  applyHypervisor(answer.hypervisor);
  return answer;
}
export async function removeHypervisor(id: string) {
  await api.delete(`/admin/hypervisors/${encodeURIComponent(id)}`);
  queryClient.setQueryData<TAdminHypervisorList>(HYPERVISORS_KEY, (list) => list && { items: list.items.filter((x) => x.id !== id), total: list.total - 1 });
}
/** "Ask them all to shut down": the console's bulk stop of desktops (the same call as the Desktops page's). */
export const shutDownDesktops = (ids: string[]) => api.post('/admin/desktops/stop', { ids }, ZAdminActionAnswer);

import { z } from 'zod';
import {
  ZDeployment,
  ZDeploymentCoOwners,
  ZDeploymentDetail,
  ZDeploymentIdAnswer,
  ZDeploymentInfo,
  ZDeploymentVisibleAnswer,
  ZGroupsUsersCountAnswer,
  type TDeployment,
  type TDeploymentAllowed,
  type TDeploymentCoOwners,
  type TDeploymentDetail,
  type TDeploymentDetailQuery,
  type TDeploymentInfo,
  type TDeploymentUpdate,
  type TNewDeployment,
} from '@vdi/contracts';
import { api, API, request } from '../../lib/api';
import { downloadText } from '../../lib/download';
import { queryClient, HANDLES_ERROR } from '../../lib/queries';
import { readPaged, withVisibility } from './logic';

const id = (s: string) => encodeURIComponent(s);

export const DEPLOYMENTS_KEY = ['deployments'] as const;
export const deploymentKey = (deploymentId: string) => ['deployment', deploymentId] as const;

export const deploymentsQuery = {
  queryKey: DEPLOYMENTS_KEY,
  queryFn: (): Promise<TDeployment[]> => api.get('/deployments', z.array(ZDeployment)),
  staleTime: 0,
  refetchOnWindowFocus: true,
} as const;

/** Desktops per answer of the deployment's detail: a deployment of hundreds is read in a few pages. */
export const DEPLOYMENT_DESKTOPS_PAGE = 100;

/** The detail with every desktop the caller reaches, read `DEPLOYMENT_DESKTOPS_PAGE` at a time. */
export async function fetchDeploymentDetail(deploymentId: string): Promise<TDeploymentDetail> {
  const page = async (n: number) => {
    const query: TDeploymentDetailQuery = { page: n, per_page: DEPLOYMENT_DESKTOPS_PAGE };
    const detail = await api.get(`/deployment/${id(deploymentId)}`, ZDeploymentDetail, { query: { page: String(query.page), per_page: String(query.per_page) } });
    return { detail, items: detail.desktops };
  };
  const { detail, items } = await readPaged(page, DEPLOYMENT_DESKTOPS_PAGE);
  return { ...detail, desktops: items };
}

export const deploymentQuery = (deploymentId: string) =>
  ({
    queryKey: deploymentKey(deploymentId),
    queryFn: (): Promise<TDeploymentDetail> => fetchDeploymentDetail(deploymentId),
    staleTime: 0,
    refetchOnWindowFocus: true,
  }) as const;

export const deploymentInfoQuery = (deploymentId: string) =>
  ({
    queryKey: ['deployment', deploymentId, 'info'],
    queryFn: (): Promise<TDeploymentInfo> => api.get(`/deployment/info/${id(deploymentId)}`, ZDeploymentInfo),
    staleTime: 0,
    meta: HANDLES_ERROR,
  }) as const;

export const coOwnersQuery = (deploymentId: string) =>
  ({
    queryKey: ['deployment', deploymentId, 'co-owners'],
    queryFn: (): Promise<TDeploymentCoOwners> => api.get(`/deployment/co-owners/${id(deploymentId)}`, ZDeploymentCoOwners),
    staleTime: 0,
    meta: HANDLES_ERROR,
  }) as const;

/**
 * How many people the chosen groups and users are, each counted once: the desktops to create.
 * Sent as `allowed`, so that an empty list counts everyone, exactly as the creation does.
 */
export async function countUsers(allowed: TDeploymentAllowed): Promise<number> {
  return (await api.put('/groups_users/count', { allowed }, ZGroupsUsersCountAnswer)).quantity;
}

/** {} when the deployment fits; a 428 with a quota code otherwise. */
export const checkDeploymentQuota = (allowed: TDeploymentAllowed) => api.post('/deployments/new/check_quota', { allowed });
export const createDeployment = (body: TNewDeployment) => api.post('/deployments', body, ZDeploymentIdAnswer);
export const updateDeployment = (deploymentId: string, body: TDeploymentUpdate) => api.put(`/deployment/${id(deploymentId)}`, body);
export const updateDeploymentUsers = (deploymentId: string, allowed: TDeploymentAllowed) => api.put(`/deployment/users/${id(deploymentId)}`, { allowed });
export const startAll = (deploymentId: string) => api.put(`/deployments/start/${id(deploymentId)}`);
export const stopAll = (deploymentId: string) => api.put(`/deployments/stop/${id(deploymentId)}`);
export const recreate = (deploymentId: string) => api.put(`/deployments/${id(deploymentId)}`);
/** Toggles visibility; the answer's state goes into the caches at once, and both are read again. */
export async function toggleVisible(deploymentId: string, stopStarted: boolean) {
  const answer = await api.put(`/deployments/visible/${id(deploymentId)}`, { stop_started_domains: stopStarted }, ZDeploymentVisibleAnswer);
  queryClient.setQueryData<TDeploymentDetail>(deploymentKey(deploymentId), (d) => (d ? withVisibility(d, answer.visible) : d));
  queryClient.setQueryData<TDeployment[]>(DEPLOYMENTS_KEY, (l) => l?.map((d) => (d.id === deploymentId ? { ...d, visible: answer.visible } : d)));
  void queryClient.invalidateQueries({ queryKey: deploymentKey(deploymentId) });
  void queryClient.invalidateQueries({ queryKey: DEPLOYMENTS_KEY });
  return answer;
}
export const setDesktopVisible = (desktopId: string, visible: boolean) => api.put(`/deployments/domain/visible/${id(desktopId)}`, { visible }, ZDeploymentVisibleAnswer);
export const deleteDeployment = (deploymentId: string, permanent = false) => api.delete(`/deployments/${id(deploymentId)}${permanent ? '/permanent' : ''}`);
export const setCoOwners = (deploymentId: string, coOwners: string[]) => api.put(`/deployment/co-owners/${id(deploymentId)}`, { co_owners: coOwners });

/** The direct-viewer links of every desktop as a CSV file, downloaded; reset gives new links (old ones stop working). */
export async function downloadDirectViewerCsv(deploymentId: string, name: string, reset: boolean) {
  const text = await request<string>(`${API}/deployments/directviewer_csv/${id(deploymentId)}`, { query: reset ? { reset: 'true' } : undefined, text: true });
  downloadText(text, 'text/csv;charset=utf-8', `${name.replace(/[^\p{L}\p{N}._-]+/gu, '_')}_direct_viewers.csv`);
}

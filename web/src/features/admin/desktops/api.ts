import { infiniteQueryOptions, keepPreviousData } from '@tanstack/react-query';
import {
  ZAdminActionAnswer,
  ZAdminDeployment,
  ZAdminDeploymentList,
  ZAdminDesktopDetail,
  ZAdminDesktopList,
  ZDesktopHistory,
  ZAdminMedia,
  ZAdminMediaList,
  ZAdminTemplate,
  ZAdminTemplateList,
  ZTemplateTree,
  ZViewerAnswer,
  type TAdminDeploymentUpdate,
  type TAdminDesktopUpdate,
  type TAdminDesktopAction,
  type TAdminMediaUpdate,
  type TAdminTemplateUpdate,
  type TViewer,
} from '@vdi/contracts';
import { api } from '../../../lib/api';
import { queryClient, HANDLES_ERROR } from '../../../lib/queries';

const id = (s: string) => encodeURIComponent(s);
/** Query values as strings, leaving out the empty ones. */
const q = (o: Record<string, string | number | boolean | undefined | null>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [k, String(v)]));

export type ListParams = {
  page: number; per_page: number; sort: string; order: 'asc' | 'desc'; search: string;
  [filter: string]: string | number | null | undefined;
};

export const CONTENT_KEY = ['admin', 'content'] as const;
/** Desktops change by themselves (they start, stop, get an address): the list is read again every few seconds. */
export const desktopsQuery = (p: ListParams) =>
  ({
    queryKey: [...CONTENT_KEY, 'desktops', p],
    queryFn: () => api.get('/admin/desktops', ZAdminDesktopList, { query: q(p) }),
    placeholderData: keepPreviousData,
    refetchInterval: 5000,
  }) as const;
export const templatesQuery = (p: ListParams) =>
  ({ queryKey: [...CONTENT_KEY, 'templates', p], queryFn: () => api.get('/admin/templates', ZAdminTemplateList, { query: q(p) }), placeholderData: keepPreviousData }) as const;
export const mediaQuery = (p: ListParams) =>
  ({ queryKey: [...CONTENT_KEY, 'media', p], queryFn: () => api.get('/admin/media', ZAdminMediaList, { query: q(p) }), placeholderData: keepPreviousData, refetchInterval: 10_000 }) as const;
export const deploymentsQuery = (p: ListParams) =>
  ({ queryKey: [...CONTENT_KEY, 'deployments', p], queryFn: () => api.get('/admin/deployments', ZAdminDeploymentList, { query: q(p) }), placeholderData: keepPreviousData }) as const;
export const templateTreeQuery = (templateId: string) =>
  ({ queryKey: [...CONTENT_KEY, 'tree', templateId], queryFn: () => api.get(`/template/tree/${id(templateId)}`, ZTemplateTree), meta: HANDLES_ERROR }) as const;

export const refreshContent = () => queryClient.invalidateQueries({ queryKey: CONTENT_KEY });

/** One desktop's page: its facts and its history, read again every few seconds (it starts, stops, gets an address). */
export const desktopDetailQuery = (desktopId: string) =>
  ({ queryKey: [...CONTENT_KEY, 'desktop', desktopId], queryFn: () => api.get(`/admin/desktops/${id(desktopId)}`, ZAdminDesktopDetail), refetchInterval: 4000, meta: HANDLES_ERROR }) as const;
/** Its history a page at a time (the newest first; older pages on demand, by the previous page's cursor). */
export const desktopHistoryQuery = (desktopId: string) =>
  infiniteQueryOptions({
    queryKey: [...CONTENT_KEY, 'desktop', desktopId, 'history'],
    queryFn: ({ pageParam }) => api.get(`/admin/desktops/${id(desktopId)}/history`, ZDesktopHistory, pageParam ? { query: { cursor: pageParam } } : undefined),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    refetchInterval: 4000,
    meta: HANDLES_ERROR,
  });

export const updateDesktop = (desktopId: string, b: TAdminDesktopUpdate) => api.put(`/admin/desktops/${id(desktopId)}`, b, ZAdminDesktopDetail);
export const desktopAction = (action: TAdminDesktopAction, ids: string[]) => api.post(`/admin/desktops/${action}`, { ids }, ZAdminActionAnswer);
export const supportViewer = (desktopId: string, viewer: TViewer) => api.get(`/admin/desktops/${id(desktopId)}/viewer/${viewer}`, ZViewerAnswer);

export const updateTemplate = (templateId: string, b: TAdminTemplateUpdate) => api.put(`/admin/templates/${id(templateId)}`, b, ZAdminTemplate);
export const deleteTemplate = (templateId: string) => api.delete(`/admin/templates/${id(templateId)}`);
export const updateMedia = (mediaId: string, b: TAdminMediaUpdate) => api.put(`/admin/media/${id(mediaId)}`, b, ZAdminMedia);
export const deleteMedia = (mediaId: string) => api.delete(`/admin/media/${id(mediaId)}`);
export const updateDeployment = (deploymentId: string, b: TAdminDeploymentUpdate) => api.put(`/admin/deployments/${id(deploymentId)}`, b, ZAdminDeployment);
export const deleteDeployment = (deploymentId: string) => api.delete(`/admin/deployments/${id(deploymentId)}`);

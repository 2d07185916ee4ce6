import { z } from 'zod';
import {
  ZAllowedTemplate,
  ZDesktop,
  ZDesktopDeleteAnswer,
  ZJumperUrl,
  ZStatusAnswer,
  ZUserPool,
  ZViewerAnswer,
  type TAllowedTemplate,
  type TDesktop,
  type TDesktopAction,
  type TViewer,
  type TViewerAnswer,
} from '@vdi/contracts';
import { api, API, HttpError } from '../../lib/api';
import { session } from '../../lib/session';
import { mergeFetched } from './logic';
import { queryClient, HANDLES_ERROR } from '../../lib/queries';

/** Non-persistent desktop creation may take a while (spec core §9). */
export const NONPERSISTENT_TIMEOUT_MS = 25_000;

export const DESKTOPS_KEY = ['desktops'] as const;
export const QUEUE_KEY = ['desktops_queue'] as const;

/**
 * The desktop pools the person may take a desktop from (their desktops screen's pool cards, their sign-in choice): read
 * again at each desktop_pool_changed (the pool cards), and every 30 s in case the live socket lost one.
 */
export const USER_POOLS_KEY = ['user', 'desktop-pools'] as const;
export const USER_POOLS_FALLBACK_MS = 30_000;
export const userPoolsQuery = { queryKey: USER_POOLS_KEY, queryFn: () => api.get('/user/desktop-pools', z.array(ZUserPool)), refetchInterval: USER_POOLS_FALLBACK_MS } as const;

export const desktopsQuery = {
  queryKey: DESKTOPS_KEY,
  queryFn: async (): Promise<TDesktop[]> => {
    const startedAt = Date.now();
    const fetched = await api.get('/user/desktops', z.array(ZDesktop));
    // Live events that arrived while this list was on its way are newer than it.
    return mergeFetched(queryClient.getQueryData<TDesktop[]>(DESKTOPS_KEY), fetched, startedAt);
  },
  refetchOnWindowFocus: true,
} as const;

export const allowedTemplatesQuery = {
  queryKey: ['user', 'templates', 'allowed', 'all'],
  queryFn: (): Promise<TAllowedTemplate[]> => api.get('/user/templates/allowed/all', z.array(ZAllowedTemplate)),
  meta: HANDLES_ERROR,
} as const;

const id = (s: string) => encodeURIComponent(s);

/** GET /desktop/{action}/{id}: start, stop (a second stop is the force stop), reset, retry. */
export function desktopCall(action: 'start' | 'stop' | 'reset' | 'retry', desktopId: string) {
  return api.get(`/desktop/${action}/${id(desktopId)}`, ZStatusAnswer);
}

/** The card's main action (offeredAction); answers the status to show until the live update. */
export async function runAction(d: TDesktop, action: TDesktopAction): Promise<string | null> {
  switch (action) {
    case 'start':
    case 'create':
      return (await desktopCall('start', d.id)).status;
    case 'stop':
    case 'forceStop':
      return (await desktopCall('stop', d.id)).status;
    case 'retry':
      return (await desktopCall('retry', d.id)).status;
    case 'delete':
      await api.delete(`/nonpersistent/${id(d.id)}`);
      return null;
    case 'cancel':
      await Promise.all(d.storage.map((s) => api.put(`/storage/${id(s)}/abort_operations`, {})));
      return null;
  }
}

/** Deletes a desktop: a temporary one for good, a persistent one to the recycle bin. */
/** A temporary desktop goes at once; a persistent one to the recycle bin, or for good when asked (`/permanent`). */
export async function deleteDesktop(d: Pick<TDesktop, 'id' | 'type'>, permanent = false): Promise<{ recycleBinId: string | null }> {
  if (d.type === 'nonpersistent') {
    await api.delete(`/nonpersistent/${id(d.id)}`);
    return { recycleBinId: null };
  }
  const answer = await api.delete(`/desktop/${id(d.id)}${permanent ? '/permanent' : ''}`, ZDesktopDeleteAnswer);
  return { recycleBinId: answer.recycle_bin_id ?? null };
}

/** Undoes a delete: the desktop back from the recycle bin entry the delete answered. */
export const undoDelete = (recycleBinId: string) => api.put(`/recycle_bin/restore/${id(recycleBinId)}`, {});

export function createTemporary(templateId: string) {
  return api.post('/nonpersistent', { template: templateId }, z.object({ id: z.string() }), { timeoutMs: NONPERSISTENT_TIMEOUT_MS, timeoutCode: 'desktop_create_timeout' });
}

export function fetchViewer(desktopId: string, viewer: TViewer): Promise<TViewerAnswer> {
  return api.get(`/desktop/${id(desktopId)}/viewer/${viewer}`, ZViewerAnswer);
}

/* ------------------------------------------------------------------ direct link */

export const jumperQuery = (desktopId: string) =>
  ({
    queryKey: ['desktops', desktopId, 'jumperurl'],
    queryFn: async (): Promise<string | false> => (await api.get(`/desktop/jumperurl/${id(desktopId)}`, ZJumperUrl)).jumperurl,
    staleTime: 0,
    meta: HANDLES_ERROR,
  }) as const;

/** Enables the direct link with a new token (the old one stops working) and answers it. */
export async function resetJumper(desktopId: string): Promise<string> {
  const answer = await api.put<unknown>(`/desktop/jumperurl_reset/${id(desktopId)}`, { disabled: false });
  if (typeof answer === 'string') return answer;
  const parsed = ZJumperUrl.safeParse(answer);
  if (parsed.success && parsed.data.jumperurl) return parsed.data.jumperurl;
  throw new Error('No direct link token in the answer');
}

export async function disableJumper(desktopId: string): Promise<void> {
  await api.put(`/desktop/jumperurl_reset/${id(desktopId)}`, { disabled: true });
}

export const directLink = (token: string, origin = window.location.origin) => `${origin}/vw/${token}`;

/* ------------------------------------------------------------------ screenshot */

/** The running machine's screen as an image, or null when there is none (not running, not offered). */
/** Where a desktop's owner reads its screen. */
export const screenshotPath = (desktopId: string) => `/desktop/${id(desktopId)}/screenshot`;

/** A screen as an image from `path` (the owner's route or the console's), or null when there is none. */
export async function fetchScreenshotAt(path: string, signal?: AbortSignal): Promise<Blob | null> {
  const token = session.token();
  const res = await fetch(`${API}${path}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    signal,
  });
  if (!res.ok) {
    if (res.status === 404 || res.status === 409 || res.status === 428) return null;
    throw new HttpError(res.status, { error: 'generic_error', msg: res.statusText, description_code: 'generic_error', description: '', params: null }, res.headers);
  }
  const blob = await res.blob();
  return blob.size > 0 && blob.type.startsWith('image/') ? blob : null;
}

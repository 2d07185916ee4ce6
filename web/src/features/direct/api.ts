import { z } from 'zod';
import { ZDirectViewer, ZViewerAnswer, type TDirectViewer, type TViewerAnswer } from '@vdi/contracts';
import { api } from '../../lib/api';
import { HANDLES_ERROR } from '../../lib/queries';

/** Opening a direct link may start the desktop first (the server waits up to a minute). */
export const DIRECT_TIMEOUT_MS = 90_000;

const enc = encodeURIComponent;

/** Public: no session token travels with these calls. */
export const fetchDirect = (code: string): Promise<TDirectViewer> => api.get(`/direct/${enc(code)}`, ZDirectViewer, { bearer: null, timeoutMs: DIRECT_TIMEOUT_MS });

export const directAction = (code: string, action: 'start' | 'stop' | 'reset') =>
  api.put(`/direct/${enc(code)}/${action}`, {}, undefined, { bearer: null, timeoutMs: DIRECT_TIMEOUT_MS });

export const directDocsQuery = {
  queryKey: ['direct', 'docs'],
  queryFn: () => api.get('/direct/docs', z.object({ viewers_documentation_url: z.string().nullable().optional() }), { bearer: null }),
  staleTime: Infinity,
  meta: HANDLES_ERROR,
} as const;

/** One viewer of a direct answer, when it is a usable one. */
export function directViewer(d: TDirectViewer | undefined, kind: 'browser-vnc' | 'file-spice'): TViewerAnswer | null {
  const parsed = ZViewerAnswer.safeParse(d?.viewers[kind]);
  return parsed.success ? parsed.data : null;
}

/** The code of /vw/<code> (anything after /vw/, without a trailing slash). */
export const codeFromPath = (splat: string | undefined) => (splat ?? '').replace(/\/+$/, '').trim();

/**
 * A directviewer_update over the current copy: state and texts change; the token and the viewers
 * stay when the event carries none (viewers are dropped once the desktop can no longer be opened).
 */
export function mergeDirectUpdate(prev: TDirectViewer | undefined, update: TDirectViewer): TDirectViewer {
  if (!prev) return update;
  const hasViewers = Object.keys(update.viewers).length > 0;
  const viewable = ['started', 'waitingip'].includes(update.vmState.toLowerCase());
  return { ...prev, ...update, jwt: update.jwt || prev.jwt, viewers: hasViewers ? update.viewers : viewable ? prev.viewers : {} };
}

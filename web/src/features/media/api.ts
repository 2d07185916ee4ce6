import { z } from 'zod';
import {
  ZAppliedQuota,
  ZMedia,
  ZMediaDesktop,
  ZNewMediaAnswer,
  type TAppliedQuota,
  type TDesktopFromMedia,
  type TMedia,
  type TMediaDesktop,
  type TNewMedia,
} from '@vdi/contracts';
import { api } from '../../lib/api';
import { HANDLES_ERROR } from '../../lib/queries';

export const OWN_MEDIA_KEY = ['media', 'own'] as const;
export const SHARED_MEDIA_KEY = ['media', 'shared'] as const;

/** The probe of a new address may take a while (the server asks the remote server first). */
const CREATE_TIMEOUT_MS = 40_000;

const id = (s: string) => encodeURIComponent(s);

export const ownMediaQuery = {
  queryKey: OWN_MEDIA_KEY,
  queryFn: (): Promise<TMedia[]> => api.get('/media', z.array(ZMedia)),
  refetchOnWindowFocus: true,
} as const;

export const sharedMediaQuery = {
  queryKey: SHARED_MEDIA_KEY,
  queryFn: (): Promise<TMedia[]> => api.get('/media_allowed', z.array(ZMedia)),
  refetchOnWindowFocus: true,
  staleTime: 5_000,
} as const;

export const mediaDesktopsQuery = (mediaId: string) =>
  ({
    queryKey: ['media', mediaId, 'desktops'],
    queryFn: (): Promise<TMediaDesktop[]> => api.get(`/media/desktops/${id(mediaId)}`, z.array(ZMediaDesktop)),
    staleTime: 0,
    meta: HANDLES_ERROR,
  }) as const;

export const appliedQuotaQuery = {
  queryKey: ['user', 'appliedquota'],
  queryFn: (): Promise<TAppliedQuota> => api.get('/user/appliedquota', ZAppliedQuota),
} as const;

export const createMedia = (body: TNewMedia) => api.post('/media', body, ZNewMediaAnswer, { timeoutMs: CREATE_TIMEOUT_MS });
export const abortMedia = (mediaId: string) => api.post(`/media/abort/${id(mediaId)}`, {});
export const retryMedia = (mediaId: string) => api.post(`/media/download/${id(mediaId)}`, {}, undefined, { timeoutMs: CREATE_TIMEOUT_MS });
export const deleteMedia = (mediaId: string) => api.delete(`/media/${id(mediaId)}`);
export const createDesktopFromMedia = (body: TDesktopFromMedia) => api.post('/desktop/from/media', body, z.object({ id: z.string() }));

import { z } from 'zod';
import {
  ZAllowedTemplate,
  ZDesktopImageChoice,
  ZDomainInfo,
  ZHardwareAllowed,
  ZInstallType,
  ZNewDesktopAnswer,
  type TAllowedTemplate,
  type TDesktopImageChoice,
  type TDomainInfo,
  type TDomainUpdate,
  type THardwareAllowed,
  type TInstallType,
  type TNewDesktop,
} from '@vdi/contracts';
import { api } from '../../lib/api';
import { HANDLES_ERROR } from '../../lib/queries';

const id = (s: string) => encodeURIComponent(s);

export const hardwareAllowedQuery = {
  queryKey: ['user', 'hardware', 'allowed'],
  queryFn: (): Promise<THardwareAllowed> => api.get('/user/hardware/allowed', ZHardwareAllowed),
  // The forms go on with what they have (the server checks the hardware again).
  meta: HANDLES_ERROR,
} as const;

export const templatesForNewQuery = {
  queryKey: ['user', 'templates', 'allowed', 'all'],
  queryFn: (): Promise<TAllowedTemplate[]> => api.get('/user/templates/allowed/all', z.array(ZAllowedTemplate)),
  staleTime: 0,
} as const;

export const domainInfoQuery = (domainId: string) =>
  ({
    queryKey: ['domain', domainId, 'info'],
    queryFn: (): Promise<TDomainInfo> => api.get(`/domain/info/${id(domainId)}`, ZDomainInfo),
    staleTime: 0,
  }) as const;

export const stockImagesQuery = (domainId?: string) =>
  ({
    queryKey: ['images', 'desktops', domainId ?? null],
    queryFn: (): Promise<TDesktopImageChoice[]> => api.get('/images/desktops', z.array(ZDesktopImageChoice), { query: { desktop_id: domainId } }),
    staleTime: 5 * 60_000,
    meta: HANDLES_ERROR,
  }) as const;

export const installsQuery = {
  queryKey: ['media', 'installs'],
  queryFn: (): Promise<TInstallType[]> => api.get('/media/installs', z.array(ZInstallType)),
  staleTime: 5 * 60_000,
  meta: HANDLES_ERROR,
} as const;

/** {} when one more desktop fits; a 428 quota error otherwise. */
export const checkNewDesktopQuota = () => api.get('/desktop/new/check_quota');

export const createDesktop = (body: TNewDesktop) => api.post('/persistent_desktop', body, ZNewDesktopAnswer);

export const updateDomain = (domainId: string, body: TDomainUpdate) => api.put(`/domain/${id(domainId)}`, body, ZDomainInfo);

export const setReservables = (domainId: string, vgpus: string[] | null) => api.put(`/domain/reservables/${id(domainId)}`, { vgpus }, ZDomainInfo);

export const recreateDisk = (domainId: string) => api.post(`/domain/${id(domainId)}/recreate_disk`, {}, ZNewDesktopAnswer);

/** A picked file as base64 (the PUT /domain/{id} upload). */
export function fileToBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('read failed'));
    reader.readAsDataURL(file);
  });
}

import { z } from 'zod';
import {
  ZAllowedTemplate,
  ZTemplate,
  ZTemplateTree,
  type TAllowedTemplate,
  type TDuplicateTemplate,
  type TNewTemplate,
  type TTemplate,
  type TTemplateTree,
  type TTemplateUpdate,
} from '@vdi/contracts';
import { api } from '../../lib/api';

const id = (s: string) => encodeURIComponent(s);
const ZId = z.object({ id: z.string() });

export const OWN_TEMPLATES_KEY = ['templates', 'own'] as const;
export const SHARED_TEMPLATES_KEY = ['templates', 'shared'] as const;

export const ownTemplatesQuery = {
  queryKey: OWN_TEMPLATES_KEY,
  queryFn: (): Promise<TTemplate[]> => api.get('/user/templates', z.array(ZTemplate)),
  staleTime: 0,
  refetchOnWindowFocus: true,
} as const;

export const sharedTemplatesQuery = {
  queryKey: SHARED_TEMPLATES_KEY,
  queryFn: (): Promise<TAllowedTemplate[]> => api.get('/user/templates/allowed/shared', z.array(ZAllowedTemplate)),
  staleTime: 0,
} as const;

export const templateQuery = (templateId: string) =>
  ({ queryKey: ['templates', 'one', templateId], queryFn: (): Promise<TTemplate> => api.get(`/template/${id(templateId)}`, ZTemplate), staleTime: 0 }) as const;

export const treeQuery = (templateId: string) =>
  ({ queryKey: ['templates', 'tree', templateId], queryFn: (): Promise<TTemplateTree> => api.get(`/template/tree/${id(templateId)}`, ZTemplateTree), staleTime: 0 }) as const;

export const createTemplate = (body: TNewTemplate) => api.post('/template/', body, ZId);
export const duplicateTemplate = (templateId: string, body: TDuplicateTemplate) => api.post(`/template/duplicate/${id(templateId)}`, body, ZId);
export const updateTemplate = (body: TTemplateUpdate) => api.put('/template/update', body, ZTemplate);
export const deleteTemplate = (templateId: string) => api.delete(`/template/${id(templateId)}`, ZId);
export const templateToDesktop = (templateId: string, name: string) => api.post('/template/to/desktop', { template_id: templateId, name }, ZId);
/** 428 with a template_new_* code when one more does not fit. */
export const checkNewTemplateQuota = () => api.get('/templates/new/check_quota');

import { keepPreviousData } from '@tanstack/react-query';
import {
  ZAdminCategory,
  ZAdminCategoryList,
  ZAdminApiTokenList,
  ZAdminCodeList,
  ZAdminGroup,
  ZAdminGroupList,
  ZAdminImportAnswer,
  ZAdminImportJob,
  ZAdminJob,
  ZAdminPasswordResetAnswer,
  ZAdminRegistrationCode,
  ZAdminUser,
  ZAdminUserList,
  ZAdminUsersBulkAnswer,
  type TAdminCategoryCreate,
  type TAdminCategoryUpdate,
  type TAdminCodeCreate,
  type TAdminGroupCreate,
  type TAdminGroupUpdate,
  type TAdminUserCreate,
  type TAdminUsersBulk,
  type TAdminUserUpdate,
  type TCredentialSheet,
} from '@vdi/contracts';
import { api, API, request } from '../../../lib/api';
import { queryClient, HANDLES_ERROR } from '../../../lib/queries';

const id = (s: string) => encodeURIComponent(s);
/** Query values as strings, leaving out the empty ones. */
const q = (o: Record<string, string | number | boolean | undefined | null>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [k, String(v)]));

export type UserListParams = {
  page: number; per_page: number; sort: string; order: 'asc' | 'desc'; search: string;
  category?: string | null; group?: string | null; role?: string | null; active?: string | null;
};

export const PEOPLE_KEY = ['admin', 'people'] as const;
export const usersQuery = (p: UserListParams) =>
  ({
    queryKey: [...PEOPLE_KEY, 'users', p],
    queryFn: () => api.get('/admin/users', ZAdminUserList, { query: q(p) }),
    placeholderData: keepPreviousData,
  }) as const;
export const groupsQuery = (search = '', category?: string | null, page = 1, perPage = 500) =>
  ({
    queryKey: [...PEOPLE_KEY, 'groups', search, category, page, perPage],
    queryFn: () => api.get('/admin/groups', ZAdminGroupList, { query: q({ search, category, page, per_page: perPage }) }),
    placeholderData: keepPreviousData,
  }) as const;
export const categoriesQuery = (search = '') =>
  ({
    queryKey: [...PEOPLE_KEY, 'categories', search],
    queryFn: () => api.get('/admin/categories', ZAdminCategoryList, { query: q({ search, per_page: 500 }) }),
    placeholderData: keepPreviousData,
  }) as const;
export const codesQuery = (search = '') =>
  ({
    queryKey: [...PEOPLE_KEY, 'codes', search],
    queryFn: () => api.get('/admin/registration_codes', ZAdminCodeList, { query: q({ search, per_page: 500 }) }),
    placeholderData: keepPreviousData,
  }) as const;

/** After a write every people list is read again (counts cross screens: users per group…). */
export const refreshPeople = () => queryClient.invalidateQueries({ queryKey: PEOPLE_KEY });

export const createUser = (b: TAdminUserCreate) => api.post('/admin/users', b, ZAdminUser);
export const updateUser = (userId: string, b: TAdminUserUpdate) => api.put(`/admin/users/${id(userId)}`, b, ZAdminUser);
export const deleteUser = (userId: string) => api.delete(`/admin/users/${id(userId)}`);
/** A one-time link to set a new password, by mail to the user's address. */
export const sendResetMail = (userId: string) => api.post(`/admin/users/${id(userId)}/reset-mail`, {});
/** Turns a person's two-factor sign-in off (they sign in with the password alone, or enrol again if required). */
export const resetTwoFactor = (userId: string) => api.delete(`/admin/users/${id(userId)}/two-factor`);
export const bulkUsers = (b: TAdminUsersBulk) => api.post('/admin/users/bulk', b, ZAdminUsersBulkAnswer);
/** The CSV import's dry run: every row checked, nothing written. */
export const checkImport = (csv: string) =>
  request(`${API}/admin/users/import`, { method: 'POST', raw: { body: csv, type: 'text/csv' }, query: { dry_run: 'true' }, timeoutMs: 120_000 }, ZAdminImportAnswer);
/** The real import: a job, answered at once; its progress is read with importJobQuery. */
export const startImport = (csv: string) =>
  request(`${API}/admin/users/import`, { method: 'POST', raw: { body: csv, type: 'text/csv' }, query: { dry_run: 'false' }, timeoutMs: 60_000 }, ZAdminImportJob);
export const importJobQuery = (jobId: string) => ({
  queryKey: [...PEOPLE_KEY, 'import', jobId],
  queryFn: () => api.get(`/admin/users/import/${id(jobId)}`, ZAdminImportJob),
  meta: HANDLES_ERROR,
});
/** Stops an import between two rows (the console's job cancel); the users created stay. */
export const cancelImport = (jobId: string) => api.delete(`/admin/jobs/${id(jobId)}`, ZAdminJob);
export const exportUsers = (p: Partial<UserListParams>) =>
  request<string>(`${API}/admin/users/export`, { text: true, query: q({ ...p, page: undefined, per_page: undefined }) });

/** Classroom accounts: one-time passwords for these users (at most PASSWORD_RESET_BATCH_MAX a call). */
export const resetPasswords = (ids: string[]) => api.post('/admin/users/password-reset', { ids }, ZAdminPasswordResetAnswer, { timeoutMs: 120_000 });
/** Their credentials sheet (CSV or PDF), made by the server from these rows and not kept. */
export const credentialsSheet = (b: TCredentialSheet) =>
  request<Blob>(`${API}/admin/users/credentials-sheet`, { method: 'POST', body: b, blob: true, timeoutMs: 120_000 });
/** The id of every user matching the filters (a whole group), read in pages of 500. */
export async function matchingUserIds(p: Omit<UserListParams, 'page' | 'per_page'>): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const list = await api.get('/admin/users', ZAdminUserList, { query: q({ ...p, page, per_page: 500 }) });
    ids.push(...list.items.map((u) => u.id));
    if (list.items.length < 500 || ids.length >= list.total) return ids;
  }
}

export const createGroup = (b: TAdminGroupCreate) => api.post('/admin/groups', b, ZAdminGroup);
export const updateGroup = (groupId: string, b: TAdminGroupUpdate) => api.put(`/admin/groups/${id(groupId)}`, b, ZAdminGroup);
export const deleteGroup = (groupId: string) => api.delete(`/admin/groups/${id(groupId)}`);

export const createCategory = (b: TAdminCategoryCreate) => api.post('/admin/categories', b, ZAdminCategory);
export const updateCategory = (categoryId: string, b: TAdminCategoryUpdate) => api.put(`/admin/categories/${id(categoryId)}`, b, ZAdminCategory);
export const deleteCategory = (categoryId: string) => api.delete(`/admin/categories/${id(categoryId)}`);

export const createCode = (b: TAdminCodeCreate) => api.post('/admin/registration_codes', b, ZAdminRegistrationCode);
export const resetCode = (code: string) => api.put(`/admin/registration_codes/${id(code)}/reset`, {}, ZAdminRegistrationCode);
export const deleteCode = (code: string) => api.delete(`/admin/registration_codes/${id(code)}`);

export type ApiTokenListParams = {
  page: number; per_page: number; sort: string; order: 'asc' | 'desc'; search: string;
  category?: string | null; scope?: string | null; state?: string | null;
};
export const apiTokensQuery = (p: ApiTokenListParams) =>
  ({
    queryKey: [...PEOPLE_KEY, 'api-tokens', p],
    queryFn: () => api.get('/admin/api-tokens', ZAdminApiTokenList, { query: q(p) }),
    placeholderData: keepPreviousData,
  }) as const;
export const revokeApiToken = (tokenId: string) => api.delete(`/admin/api-tokens/${id(tokenId)}`);

import { z } from 'zod';
import {
  ZAuditList,
  ZAdminBackupJob,
  ZAdminBackups,
  type TAdminBackups,
  ZMailSettingAnswer,
  ZPublicAddressAnswer,
  SETTING_SCHEMAS,
  type TAuditList,
  type TAuditQuery,
  type TSettingKey,
  type TSettingValue,
} from '@vdi/contracts';
import { api, API, request } from '../../../lib/api';
import { session } from '../../../lib/session';
import { queryClient, HANDLES_ERROR } from '../../../lib/queries';
import { downloadText } from '../../../lib/download';

export const settingKey = (key: TSettingKey) => ['admin', 'setting', key] as const;
export const AUDIT_KEY = ['admin', 'audit'] as const;

/**
 * What GET answers for each setting (the mail password is never answered; `password_set` says whether one is
 * stored; the public address comes with the server's `PUBLIC_URL`, `environment`, which wins when set).
 */
export type SettingAnswer<K extends TSettingKey> = K extends 'mail'
  ? z.infer<typeof ZMailSettingAnswer>
  : K extends 'public_address'
    ? z.infer<typeof ZPublicAddressAnswer>
    : TSettingValue<K>;
const ANSWERS: Partial<Record<TSettingKey, z.ZodType>> = { mail: ZMailSettingAnswer, public_address: ZPublicAddressAnswer };
const answerSchema = (key: TSettingKey): z.ZodType => ANSWERS[key] ?? SETTING_SCHEMAS[key];

export const settingQuery = <K extends TSettingKey>(key: K) =>
  ({
    queryKey: settingKey(key),
    queryFn: () => api.get(`/admin/settings/${key}`, answerSchema(key)) as Promise<SettingAnswer<K>>,
    staleTime: 0,
    meta: HANDLES_ERROR,
  }) as const;

/** Stores the given fields of a setting (the server merges them) and refreshes it. */
export async function saveSetting<K extends TSettingKey>(key: K, fields: Partial<TSettingValue<K>>): Promise<SettingAnswer<K>> {
  const saved = (await api.put(`/admin/settings/${key}`, fields, answerSchema(key))) as SettingAnswer<K>;
  queryClient.setQueryData(settingKey(key), saved);
  return saved;
}

export const sendTestMail = (to: string) => api.post('/admin/settings/mail/test', { to });

/** Filters as query parameters (empty ones left out). */
const paramsOf = (q: TAuditQuery): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(q).map(([k, v]) => [k, v === undefined || v === '' ? undefined : String(v)]));

export const auditQuery = (q: TAuditQuery) =>
  ({
    queryKey: [...AUDIT_KEY, q],
    queryFn: (): Promise<TAuditList> => api.get('/admin/audit', ZAuditList, { query: paramsOf(q) }),
    staleTime: 0,
    placeholderData: (previous: TAuditList | undefined) => previous,
    meta: HANDLES_ERROR,
  }) as const;

/** Downloads the CSV of the filtered log (the call needs the session's Bearer token, so not a plain link). */
export async function downloadAuditCsv(q: TAuditQuery) {
  const { page: _page, per_page: _perPage, ...filters } = q;
  const text = await request<string>(`${API}/admin/audit/export`, { query: paramsOf(filters), bearer: session.token(), text: true });
  downloadText(text, 'text/csv;charset=utf-8', `audit-${new Date().toISOString().slice(0, 10)}.csv`);
}

export const BACKUPS_KEY = ['admin', 'backups'] as const;
/** The backups kept on the server, the newest, and the newest backup job (polled while one runs). */
export const backupsQuery = () =>
  ({
    queryKey: BACKUPS_KEY,
    queryFn: (): Promise<TAdminBackups> => api.get('/admin/backups', ZAdminBackups),
    staleTime: 0,
    refetchInterval: (q: { state: { data?: TAdminBackups } }) => (q.state.data?.job && ['queued', 'running'].includes(q.state.data.job.status) ? 1000 : false),
    meta: HANDLES_ERROR,
  }) as const;

export async function startBackup(disks: boolean) {
  await api.post('/admin/backups', { disks }, ZAdminBackupJob);
  await queryClient.invalidateQueries({ queryKey: BACKUPS_KEY });
}

/** Saves one backup through the browser (the archive as it is on the server). */
export async function downloadBackup(name: string) {
  const blob = await request<Blob>(`${API}/admin/backups/file/${encodeURIComponent(name)}`, { bearer: session.token(), blob: true });
  downloadText(blob, blob.type || 'application/octet-stream', name);
}

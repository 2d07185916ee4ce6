import { keepPreviousData } from '@tanstack/react-query';
import { ZUsageReport, type TReportPart, type TUsageReportQuery } from '@vdi/contracts';
import { api, API, request } from '../../../lib/api';
import { session } from '../../../lib/session';
import { downloadText } from '../../../lib/download';
import { INFRA_KEY } from './api';

const paramsOf = (q: TUsageReportQuery) => ({ from: q.from, to: q.to, group_by: q.group_by, ...(q.category ? { category: q.category } : {}) });

/** A usage report for a period and a grouping. */
export const usageReportQuery = (q: TUsageReportQuery) => ({
  queryKey: [...INFRA_KEY, 'reports', q],
  queryFn: () => api.get('/admin/reports/usage', ZUsageReport, { query: paramsOf(q) }),
  placeholderData: keepPreviousData,
});

/** Downloads one part of the report as CSV (the call needs the session's Bearer token, so not a plain link). */
export async function downloadReportCsv(q: TUsageReportQuery, part: TReportPart) {
  const text = await request<string>(`${API}/admin/reports/usage/csv`, { query: { ...paramsOf(q), part }, bearer: session.token(), text: true });
  downloadText(text, 'text/csv;charset=utf-8', `usage-${part}-${q.from}-${q.to}.csv`);
}

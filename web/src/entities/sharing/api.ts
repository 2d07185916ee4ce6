import { z } from 'zod';
import { ZAllowedTableItem, ZAllowedTermGroup, ZAllowedTermUser, type TAllowed, type TAllowedTableItem, type TAllowedUpdateTable, type TUser } from '@vdi/contracts';
import { api } from '../../lib/api';
import { queryClient, userQuery } from '../../lib/queries';

/**
 * The sharing picker's search (at least 2 letters: POST /admin/allowed/term/{table}, within whom
 * the caller may pick), or the names of ids already chosen (POST /allowed/table/{table}).
 */
export async function searchAllowed(table: 'groups' | 'users', query: { term: string } | { ids: string[] }): Promise<TAllowedTableItem[]> {
  if (!('term' in query)) return api.post(`/allowed/table/${table}`, query, z.array(ZAllowedTableItem));
  // Admins pick in every category: their results say which.
  const admin = queryClient.getQueryData<TUser>(userQuery.queryKey)?.role === 'admin';
  if (table === 'groups') {
    const groups = await api.post(`/admin/allowed/term/groups`, query, z.array(ZAllowedTermGroup));
    return groups.map((g) => ({ id: g.id, name: g.name, detail: admin ? g.category_name : null }));
  }
  const users = await api.post(`/admin/allowed/term/users`, query, z.array(ZAllowedTermUser));
  return users.map((u) => ({ id: u.id, name: u.name, detail: admin ? `${u.uid} · ${u.category_name}` : u.uid }));
}

/** Saves whom a template (`domains`) or a media is shared with: POST /admin/allowed/update/{table}. */
export const updateAllowed = (table: TAllowedUpdateTable, itemId: string, allowed: TAllowed) => api.post(`/admin/allowed/update/${table}`, { id: itemId, allowed });


/** The engine of this server: its host is the hypervisor row `local` (seeded by migration 0010). */
export { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { sql } from 'drizzle-orm';
import { schema } from '../../db';
import { qualified } from '../../db/qualified';

/** Whether a hypervisor takes new ordinary starts: enabled, not "only forced", not draining. */
export const acceptsStarts = (h: { enabled: boolean; onlyForced: boolean; draining?: boolean }) => h.enabled && !h.onlyForced && !h.draining;

/**
 * The host a domain of the query is on (when it is on one): placement's choice, or this server's own
 * host for a desktop started before hosts were recorded.
 */
export const domainHostIdSql = () => sql<string>`coalesce(${qualified(schema.domains.hypervisorId)}, ${LOCAL_HYPERVISOR})`;

/** That host's name as the console and the portal show it (its id if the row is gone); never its URI. */
export function domainHostNameSql() {
  const h = schema.hypervisors;
  return sql<string>`coalesce((select ${qualified(h.name)} from ${h} where ${qualified(h.id)} = ${domainHostIdSql()}), ${domainHostIdSql()})`;
}

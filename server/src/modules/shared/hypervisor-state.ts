import { and, eq } from 'drizzle-orm';
import { schema, type Db } from '../../db';
import { precondition } from '../../http/errors';

/** The engine of this server: its host is the hypervisor row `local` (seeded by migration 0010). */
export { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';

/** Whether a hypervisor takes new ordinary starts: enabled and not "only forced". */
export const acceptsStarts = (h: { enabled: boolean; onlyForced: boolean }) => h.enabled && !h.onlyForced;

/**
 * A desktop start needs a hypervisor that takes new desktops. The state is read from the database
 * at each start (one primary-key query), so a switch by any server process applies to the next start.
 */
export async function assertHypervisorAcceptsStarts(db: Db) {
  const [row] = await db
    .select({ id: schema.hypervisors.id })
    .from(schema.hypervisors)
    .where(and(eq(schema.hypervisors.id, LOCAL_HYPERVISOR), eq(schema.hypervisors.enabled, true), eq(schema.hypervisors.onlyForced, false)));
  if (!row) {
    throw precondition('hypervisors_not_available', 'No hypervisor takes new desktops now: an administrator has stopped new starts', { reason: 'no_new_starts' });
  }
}

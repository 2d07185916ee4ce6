
/** The engine of this server: its host is the hypervisor row `local` (seeded by migration 0010). */
export { LOCAL_HYPERVISOR } from '@vdi/contracts';
import { LOCAL_HYPERVISOR } from '@vdi/contracts';

/** Whether a hypervisor takes new ordinary starts: enabled, not "only forced", not draining. */
export const acceptsStarts = (h: { enabled: boolean; onlyForced: boolean; draining?: boolean }) => h.enabled && !h.onlyForced && !h.draining;

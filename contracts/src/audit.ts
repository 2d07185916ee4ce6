import { z } from 'zod';

/** One audit log entry as the API answers it (`GET /api/v3/admin/audit`). */
export const ZAuditEntry = z.object({
  id: z.number(),
  at: z.string(),
  actor_id: z.string().nullable(),
  actor_name: z.string(),
  actor_role: z.string().nullable(),
  action: z.string(),
  object_type: z.string(),
  object_id: z.string(),
  object_name: z.string(),
  category_id: z.string().nullable(),
  address: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
});
export type TAuditEntry = z.infer<typeof ZAuditEntry>;

import { sql } from 'drizzle-orm';
import { schema } from '../../db';
import { usagePart } from '../quotas/applied';

const d = schema.domains;

/** The templates part of a user's `used`: every template they own (disabled ones too). */
export const templateUsage = usagePart<{ templates: number }>({
  sql: (userId) => sql`select count(*) as templates from ${d} where ${d.userId} = ${userId} and ${d.kind} = 'template'`,
  fields: (r) => ({ templates: Number(r.templates ?? 0) }),
});

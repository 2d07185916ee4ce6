import { sql } from 'drizzle-orm';
import { schema } from '../../db';
import { usagePart } from '../quotas/applied';

const d = schema.domains;

/** The templates part of `used`: every template owned (disabled ones too). */
export const templateUsage = usagePart<{ templates: number }>({
  counts: ['templates'],
  sql: (owned) => sql`select count(*) as templates from ${d} where ${owned(d.userId)} and ${d.kind} = 'template'`,
  read: (r) => ({ templates: Number(r.templates ?? 0) }),
});

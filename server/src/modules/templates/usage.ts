import { and, count, eq } from 'drizzle-orm';
import type { TQuota } from '@vdi/contracts';
import type { Db } from '../../db';
import { schema } from '../../db';
import { ownedIn, type UsageScope } from '../quotas/applied';

/** The templates part of a user's `used`: every template they own (disabled ones too). */
export async function templateUsage(db: Db, scope: UsageScope): Promise<Partial<TQuota>> {
  const [row] = await db
    .select({ n: count() })
    .from(schema.domains)
    .where(and(ownedIn(db, schema.domains.userId, scope), eq(schema.domains.kind, 'template')));
  return { templates: Number(row?.n ?? 0) };
}

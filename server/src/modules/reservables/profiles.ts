import { and, asc, eq } from 'drizzle-orm';
import type { THardwareItem } from '@vdi/contracts';
import { schema, type Db } from '../../db';
import type { Actor } from '../../auth/caller';
import { allowedMatches } from './priorities';

/** The GPU profiles (enabled subitems) a person may pick for a desktop: all for admins, else those shared with them. */
export async function allowedProfiles(db: Db, actor: Actor) {
  const rows = await db
    .select()
    .from(schema.reservableSubitems)
    .where(and(eq(schema.reservableSubitems.enabled, true), eq(schema.reservableSubitems.itemType, 'vgpus')))
    .orderBy(asc(schema.reservableSubitems.name));
  return rows.filter((s) => actor.role === 'admin' || allowedMatches(actor, s.allowed));
}

/** The same as hardware choices (GET /user/hardware/allowed). */
export const profileChoices = async (db: Db, actor: Actor): Promise<THardwareItem[]> =>
  (await allowedProfiles(db, actor)).map((s) => ({ id: s.id, name: s.name, description: s.description }));

export async function findProfile(db: Db, id: string) {
  return (await db.select().from(schema.reservableSubitems).where(eq(schema.reservableSubitems.id, id)))[0];
}

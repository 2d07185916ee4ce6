import { and, eq, isNotNull } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';

/** The downloaded ISO media attached to a desktop (domain_media), as the engine's CD-ROMs (MachineSpec.isos). */
export async function attachedIsos(db: Db, domainId: string): Promise<{ path: string }[]> {
  const rows = await db
    .select({ path: schema.media.path })
    .from(schema.domainMedia)
    .innerJoin(schema.media, eq(schema.media.id, schema.domainMedia.mediaId))
    .where(
      and(
        eq(schema.domainMedia.domainId, domainId),
        eq(schema.domainMedia.kind, 'iso'),
        eq(schema.media.status, 'Downloaded'),
        isNotNull(schema.media.path),
      ),
    );
  return rows.map((r) => ({ path: r.path! }));
}

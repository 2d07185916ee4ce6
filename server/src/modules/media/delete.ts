import { and, eq } from 'drizzle-orm';
import { MEDIA_DOWNLOADING_STATUSES, type TMediaStatus } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import { conflict } from '../../http/errors';
import type { MediaService } from './service';
import { desktopsUsing, type MediaRow } from './view';

/**
 * DELETE /media/{id} (and the console's delete): refused while a running desktop has it; stopped
 * desktops lose it (and boot from their disk); its download stops, its file goes, it is `deleted`.
 */
export async function deleteMedia(ctx: AppContext, media: MediaService, row: MediaRow) {
  const { db } = ctx;
    if (row.status === 'Deleting') throw conflict('media_action_not_available', 'The media is being deleted', { action: 'delete' });
    const using = await desktopsUsing(db, row.id);
    const running = using.filter((d) => d.running);
    if (running.length > 0) {
      throw conflict('media_in_use', 'Stop the desktops that use this media first', { desktops: running.map((d) => d.name).join(', ') });
    }
    const deleting = await media.update(row.id, { status: 'Deleting' }, [row.status]);
    if (!deleting) throw conflict('media_action_not_available', 'The media changed', { action: 'delete' });
    if (MEDIA_DOWNLOADING_STATUSES.includes(row.status as TMediaStatus) || row.status === 'DownloadAborting') await media.stopDownload(row);
    for (const d of using) {
      await db.transaction(async (tx) => {
        await tx.delete(schema.domainMedia).where(and(eq(schema.domainMedia.domainId, d.id), eq(schema.domainMedia.mediaId, row.id)));
        const [dom] = await tx.select().from(schema.domains).where(eq(schema.domains.id, d.id));
        if (!dom) return;
        const isos = dom.hardware.isos.filter((m) => m !== row.id);
        const floppies = dom.hardware.floppies.filter((m) => m !== row.id);
        const bootOrder = isos.length > 0 ? dom.hardware.bootOrder : dom.hardware.bootOrder.filter((b) => b !== 'iso');
        await tx
          .update(schema.domains)
          .set({ hardware: { ...dom.hardware, isos, floppies, bootOrder: bootOrder.length ? bootOrder : ['disk'] } })
          .where(eq(schema.domains.id, d.id));
      });
    }
    const path = row.path ?? media.finalPath(row);
    await ctx.engine.disks.remove(path).catch((err) => ctx.log.warn({ err, path }, 'could not remove a media file'));
    await media.update(row.id, { status: 'deleted', path: null, progress: null });
}

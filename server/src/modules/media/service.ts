import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { IncomingMessage } from 'node:http';
import { and, eq, inArray } from 'drizzle-orm';
import { MEDIA_DOWNLOADING_STATUSES, type TMediaProgress, type TMediaStatus } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { schema } from '../../db';
import type { JobContext, JobHandler, JobOutcome, JobRow } from '../../jobs/runner';
import { hasMediaFormat } from './format';
import { downloadAllowance } from './quota';
import { mediaFetchPolicy, MediaUrlError, safeRequest, type FetchPolicy } from './safe-fetch';
import { findMedia, mediaViews, type MediaRow } from './view';

export const MEDIA_DOWNLOAD_JOB = 'media_download';
/** Live progress: at most twice a second. */
const PROGRESS_EVERY_MS = 500;
/** A server that sends nothing for this long fails the download. */
const IDLE_TIMEOUT_MS = 60_000;

/** A download that ended badly: the media's final status and the reason (a description code). */
export class DownloadFailure extends Error {
  constructor(
    readonly status: Extract<TMediaStatus, 'DownloadFailed' | 'DownloadFailedInvalidFormat'>,
    readonly code: string,
    message = code,
  ) {
    super(message);
    this.name = 'DownloadFailure';
  }
}

export function progressOf(received: number, total: number, startedAt: number): TMediaProgress {
  const seconds = Math.max(0.001, (Date.now() - startedAt) / 1000);
  const speed = received / seconds;
  const percent = total > 0 ? Math.min(100, (received / total) * 100) : 0;
  return {
    received_bytes: received,
    total_bytes: total,
    total_percent: Math.round(percent * 10) / 10,
    speed_bytes_per_second: Math.round(speed),
    time_left_seconds: total > 0 && speed > 0 ? Math.max(0, Math.round((total - received) / speed)) : null,
  };
}

const contentLength = (res: IncomingMessage) => {
  const v = Number(res.headers['content-length']);
  return Number.isSafeInteger(v) && v > 0 ? v : 0;
};

/**
 * Media records, their live events, and the download job: streamed to a temporary file under
 * DATA_DIR/storage/media, checked (ISO 9660 or floppy), then renamed into place.
 */
export function createMediaService(ctx: AppContext) {
  const { db, bus, log } = ctx;
  // Read at each use: the operator's setting (tests switch it).
  const policy = (): FetchPolicy => mediaFetchPolicy(ctx.config.mediaAllowPrivateUrls);

  // Where a media's file lives, and where its download is written first: the engine's store says.
  const finalPath = (row: Pick<MediaRow, 'id' | 'kind'>) => ctx.engine.disks.mediaTarget(row).file;
  const partPath = (row: Pick<MediaRow, 'id' | 'kind'>) => ctx.engine.disks.mediaTarget(row).part;

  /** Tells the owner: media_delete once deleted, media_add when new, media_update otherwise. */
  async function publish(row: MediaRow, event: 'media_add' | 'media_update' = 'media_update') {
    if (row.status === 'deleted') return bus.toUser(row.userId, 'media_delete', { id: row.id });
    const [view] = await mediaViews(db, [row], null);
    bus.toUser(row.userId, event, view!);
  }

  /** Changes a media (only from the given statuses, when listed) and publishes it. */
  async function update(id: string, set: Partial<MediaRow>, onlyFrom?: readonly string[]): Promise<MediaRow | undefined> {
    const where = onlyFrom ? and(eq(schema.media.id, id), inArray(schema.media.status, [...onlyFrom])) : eq(schema.media.id, id);
    const [row] = await db.update(schema.media).set(set).where(where).returning();
    if (row) await publish(row);
    return row;
  }

  async function run(job: JobContext) {
    const id = job.job.targetId;
    const row = await findMedia(db, id);
    if (!row || !MEDIA_DOWNLOADING_STATUSES.includes(row.status as TMediaStatus) && row.status !== 'Downloading') {
      throw new Error(`media ${id} is not waiting for a download (${row?.status ?? 'gone'})`);
    }
    const part = partPath(row);
    await mkdir(dirname(part), { recursive: true });
    const startedAt = Date.now();
    const { res } = await safeRequest(row.url, policy(), { method: 'GET', signal: job.signal, idleTimeoutMs: IDLE_TIMEOUT_MS });
    if (res.statusCode !== 200) {
      res.destroy();
      throw new DownloadFailure('DownloadFailed', 'media_url_not_found', `the server answered ${res.statusCode}`);
    }
    const total = contentLength(res);
    const downloading = await update(
      id,
      { status: 'Downloading', size: total || row.size, detail: '', progress: progressOf(0, total, startedAt) },
      [...MEDIA_DOWNLOADING_STATUSES, 'Downloading'],
    );
    if (!downloading) {
      res.destroy();
      throw new Error('the download was cancelled before it began');
    }
    const allowance = await downloadAllowance(db, row.userId, total || row.size);

    let received = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        received += chunk.length;
        if (allowance !== null && received > allowance) cb(new DownloadFailure('DownloadFailed', 'total_size_quota_exceeded'));
        else cb(null, chunk);
      },
    });
    let reporting: Promise<unknown> = Promise.resolve();
    const report = () => {
      reporting = reporting
        .then(async () => {
          const p = progressOf(received, total, startedAt);
          await update(id, { progress: p }, ['Downloading']);
          await job.progress(p.total_percent, { received_bytes: p.received_bytes, total_bytes: p.total_bytes });
        })
        .catch((err) => log.warn({ err, media: id }, 'media progress not stored'));
    };
    const timer = setInterval(report, PROGRESS_EVERY_MS);
    try {
      await pipeline(res, counter, createWriteStream(part), { signal: job.signal });
    } finally {
      clearInterval(timer);
      await reporting;
    }
    if (total > 0 && received !== total) throw new DownloadFailure('DownloadFailed', 'download_incomplete');
    if (!(await hasMediaFormat(part, row.kind))) throw new DownloadFailure('DownloadFailedInvalidFormat', 'media_invalid_format');
    const target = finalPath(row);
    await ctx.engine.disks.move(part, target);
    const done = await update(
      id,
      { status: 'Downloaded', path: target, size: received, detail: '', progress: { ...progressOf(received, received, startedAt), total_percent: 100, time_left_seconds: 0 } },
      ['Downloading'],
    );
    if (!done) {
      // Deleted (or aborted) at the last moment: the file must not stay behind.
      await ctx.engine.disks.remove(target);
      throw new Error('the media changed while it was downloading');
    }
  }

  async function finished(jobRow: JobRow, outcome: JobOutcome, error?: unknown) {
    const row = await findMedia(db, jobRow.targetId);
    if (!row) return;
    await ctx.engine.disks.remove(partPath(row)).catch(() => undefined);
    if (outcome === 'done' || row.status === 'Deleting' || row.status === 'deleted' || row.status === 'Downloaded') return;
    if (outcome === 'aborted' || row.status === 'DownloadAborting') {
      await update(row.id, { status: 'DownloadFailed', detail: 'download_aborted' });
      return;
    }
    const failure =
      error instanceof DownloadFailure
        ? error
        : error instanceof MediaUrlError
          ? new DownloadFailure('DownloadFailed', error.code)
          : new DownloadFailure('DownloadFailed', 'download_failed');
    log.info({ media: row.id, code: failure.code, err: error }, 'media download failed');
    await update(row.id, { status: failure.status, detail: failure.code });
  }

  const handler: JobHandler = { kind: MEDIA_DOWNLOAD_JOB, resumable: true, run, finished };
  /** The end of each download started by this process, by media id. */
  const downloads = new Map<string, Promise<unknown>>();
  async function abortDownload(mediaId: string): Promise<boolean> {
    const job = await ctx.jobs.activeFor(mediaId, MEDIA_DOWNLOAD_JOB);
    return job ? ctx.jobs.abort(job.id) : false;
  }

  return {
    policy,
    handler,
    publish,
    update,
    finalPath,
    /** Starts (or restarts) the download job of a media. */
    async startDownload(row: MediaRow) {
      const started = await ctx.jobs.enqueue(MEDIA_DOWNLOAD_JOB, { userId: row.userId, targetId: row.id, params: { url: row.url } });
      downloads.set(row.id, started.done);
      void started.done.finally(() => downloads.get(row.id) === started.done && downloads.delete(row.id));
      return started;
    },
    /** Asks the running download of a media to stop; false when none runs here. */
    abortDownload,
    /** Stops the download of a media and waits until it has ended and left nothing on disk. */
    async stopDownload(row: MediaRow) {
      await abortDownload(row.id);
      const done = downloads.get(row.id);
      if (done) await Promise.race([done, new Promise((r) => setTimeout(r, 10_000).unref())]);
      await ctx.engine.disks.remove(partPath(row)).catch(() => undefined);
    },
  };
}
export type MediaService = ReturnType<typeof createMediaService>;

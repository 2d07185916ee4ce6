import { z } from 'zod';
import { NOT_SHARED, ZAllowed, type TAllowed } from './allowed';

/** Media statuses as stored and sent (spec 001 §4, reference §2.13); `deleted` ones are never listed. */
export const MEDIA_STATUSES = [
  'DownloadStarting',
  'Downloading',
  'Downloaded',
  'DownloadFailed',
  'DownloadFailedInvalidFormat',
  'DownloadAborting',
  'ResetDownloading',
  'FailedDeleted',
  'Deleting',
  'Maintenance',
  'deleted',
] as const;
export type TMediaStatus = (typeof MEDIA_STATUSES)[number];

/** While one of these, a download job runs (abort is offered). */
export const MEDIA_DOWNLOADING_STATUSES: readonly TMediaStatus[] = ['DownloadStarting', 'Downloading', 'ResetDownloading'];
/** A failed download can be tried again. */
export const MEDIA_RETRYABLE_STATUSES: readonly TMediaStatus[] = ['DownloadFailed', 'DownloadFailedInvalidFormat'];

export const MEDIA_KINDS = ['iso', 'floppy'] as const;
export const ZMediaKind = z.enum(MEDIA_KINDS);
export type TMediaKind = z.infer<typeof ZMediaKind>;

/** Maximum media name length (reference §7). */
export const MEDIA_NAME_MAX = 50;
export const MEDIA_DESCRIPTION_MAX = 255;
export const MEDIA_URL_MAX = 2048;

/**
 * Sharing of a media: for each key, false = criterion unused, [] = everyone
 * (groups and users: everyone of the owner's category), a list = those ids.
 */
export const ZMediaAllowed = ZAllowed;
export type TMediaAllowed = TAllowed;
export const MEDIA_NOT_SHARED: TMediaAllowed = NOT_SHARED;
/** Everyone of the owner's category (an empty group list). */
export const MEDIA_SHARED_WITH_CATEGORY: TMediaAllowed = { roles: false, categories: false, groups: [], users: false };

/** Download progress: bytes, percent, average throughput and the estimated time left. */
export const ZMediaProgress = z.object({
  received_bytes: z.number(),
  /** 0 when the server did not say how big the file is */
  total_bytes: z.number(),
  total_percent: z.number(),
  /** average since the download began */
  speed_bytes_per_second: z.number(),
  time_left_seconds: z.number().nullable(),
});
export type TMediaProgress = z.infer<typeof ZMediaProgress>;

/** A media as GET /media, GET /media_allowed and the media_* events carry it. */
export const ZMedia = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  url: z.string(),
  kind: ZMediaKind,
  /** the spec's "type": the same as kind */
  type: ZMediaKind,
  status: z.string(),
  icon: z.string(),
  user: z.string(),
  user_name: z.string().nullable(),
  category: z.string(),
  category_name: z.string().nullable(),
  group: z.string(),
  group_name: z.string().nullable(),
  allowed: ZMediaAllowed,
  progress: ZMediaProgress.nullable(),
  /** bytes of the downloaded file (or announced while downloading) */
  size: z.number(),
  /** why the last download failed (a description code), empty otherwise */
  detail: z.string(),
  accessed: z.number().nullable(),
  created: z.number(),
  editable: z.boolean(),
});
export type TMedia = z.infer<typeof ZMedia>;

export const ZNewMedia = z.object({
  name: z.string().trim().min(1).max(MEDIA_NAME_MAX),
  url: z.string().trim().min(1).max(MEDIA_URL_MAX),
  kind: ZMediaKind,
  description: z.string().trim().max(MEDIA_DESCRIPTION_MAX).default(''),
  allowed: ZMediaAllowed.optional(),
});
export type TNewMedia = z.input<typeof ZNewMedia>;
export const ZNewMediaAnswer = z.object({ id: z.string() });

/** A desktop that uses a media (the delete modal lists them). */
export const ZMediaDesktop = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  status: z.string(),
  user: z.string(),
  user_name: z.string().nullable(),
});
export type TMediaDesktop = z.infer<typeof ZMediaDesktop>;

export const MEDIA_DESKTOP_NAME_MIN = 4;
export const MEDIA_DESKTOP_NAME_MAX = 50;

/** POST /desktop/from/media: an empty disk of disk_size GB that boots the media first. */
export const ZDesktopFromMedia = z.object({
  name: z.string().trim().min(MEDIA_DESKTOP_NAME_MIN).max(MEDIA_DESKTOP_NAME_MAX),
  description: z.string().trim().max(255).default(''),
  media_id: z.string().min(1).max(64),
  kind: ZMediaKind,
  /** GB, whole numbers */
  disk_size: z.number().int().min(1).max(100_000),
  disk_bus: z.enum(['default', 'virtio', 'ide', 'sata']).default('default'),
  hardware: z
    .object({
      vcpus: z.number().int().min(1).max(255),
      /** GB, in steps of 0.5 */
      memory: z.number().min(0.5).max(4096).multipleOf(0.5),
    })
    .partial()
    .optional(),
});
export type TDesktopFromMedia = z.input<typeof ZDesktopFromMedia>;

/** Default hardware of a desktop from media (spec core §9: memory 1 GB, 1 vCPU). */
export const MEDIA_DESKTOP_DEFAULTS = { vcpus: 1, memory: 1, disk_size: 10 } as const;

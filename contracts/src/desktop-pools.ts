import { z } from 'zod';
import { ZAllowed } from './allowed';
import { ZDomainDescription, ZDomainName } from './domains';
import { ZViewer, ZViewerBrowser } from './desktops';

/**
 * Desktop pools (issue 30): desktops of one template kept prepared (booted and waiting) for the people a pool is
 * shared with, handed out at one click. Persistent: each person keeps the desktop they got. Non-persistent: it goes
 * back to the template's state when the person gives it back (the desktop is destroyed; a fresh one is prepared).
 */

export const POOL_MAX_DESKTOPS = 500;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
export const ZPoolTime = z.string().regex(TIME, 'HH:MM');

/** A timetable row: on these weekdays (1 = Monday … 7 = Sunday), from–to (local time of the server), this many prepared. */
export const ZPoolScheduleRow = z
  .strictObject({
    days: z.array(z.number().int().min(1).max(7)).min(1).max(7),
    from: ZPoolTime,
    to: ZPoolTime,
    prepared: z.number().int().min(0).max(POOL_MAX_DESKTOPS),
  })
  .refine((r) => r.from < r.to, { message: 'The period must end after it starts', path: ['to'] });
export type TPoolScheduleRow = z.infer<typeof ZPoolScheduleRow>;

/** When a non-persistent pool's desktop goes back to the template's state (any that applies). */
export const ZPoolGiveBack = z.strictObject({
  /** when its person signs out */
  on_sign_out: z.boolean(),
  /** when no viewer has been open on it for this many minutes (null: never for this reason) */
  viewer_closed_minutes: z.number().int().min(1).max(24 * 60).nullable(),
  /** every day at this time (null: never for this reason) */
  at: ZPoolTime.nullable(),
});
export type TPoolGiveBack = z.infer<typeof ZPoolGiveBack>;

/** What the people of the pool may do with the desktop they got. */
export const ZPoolPermissions = z.strictObject({
  viewers: z.array(ZViewer).min(1),
  may_restart: z.boolean(),
});
export type TPoolPermissions = z.infer<typeof ZPoolPermissions>;

const poolFields = {
  name: ZDomainName,
  description: ZDomainDescription,
  template_id: z.string().min(1).max(64),
  /** Who may take a desktop from it (as templates are shared: roles, organisations, groups, people). */
  allowed: ZAllowed,
  max_desktops: z.number().int().min(1).max(POOL_MAX_DESKTOPS),
  /** Kept prepared at all times (outside the timetable's rows). */
  prepared: z.number().int().min(0).max(POOL_MAX_DESKTOPS),
  schedule: z.array(ZPoolScheduleRow).max(50),
  persistent: z.boolean(),
  give_back: ZPoolGiveBack,
  permissions: ZPoolPermissions,
  enabled: z.boolean(),
};

export const ZPoolCreate = z
  .strictObject({
    ...poolFields,
    description: ZDomainDescription.default(''),
    schedule: poolFields.schedule.default([]),
    persistent: z.boolean().default(false),
    give_back: ZPoolGiveBack.default({ on_sign_out: false, viewer_closed_minutes: 30, at: null }),
    permissions: ZPoolPermissions.default({ viewers: ['browser-vnc'], may_restart: true }),
    enabled: z.boolean().default(true),
  })
  .refine((p) => p.prepared <= p.max_desktops, { message: 'No more prepared than the pool may hold', path: ['prepared'] });
export type TPoolCreate = z.input<typeof ZPoolCreate>;
export const ZPoolUpdate = z.strictObject(poolFields).partial();
export type TPoolUpdate = z.infer<typeof ZPoolUpdate>;

/** A pool's desktops now: prepared (waiting for someone), preparing, in use (given to someone), by host. */
export const ZPoolCounts = z.object({
  prepared: z.number().int(),
  preparing: z.number().int(),
  in_use: z.number().int(),
  /** Desktops given to people and at rest (persistent pools): they count toward the pool's size. */
  kept: z.number().int(),
  waiting: z.number().int(),
  /** The prepared count the pool aims at now (timetable, clamped by its size). */
  target: z.number().int(),
  by_host: z.array(z.object({ hypervisor: z.string(), name: z.string(), prepared: z.number().int(), in_use: z.number().int(), preparing: z.number().int() })),
});
export type TPoolCounts = z.infer<typeof ZPoolCounts>;

/** Why a pool prepares nothing now; `no_room`: the hypervisors refused its last start for lack of room (it tries again shortly). */
export const POOL_STALLED = ['disabled', 'template_disabled', 'template_missing', 'not_booked', 'no_room'] as const;
export type TPoolStalled = (typeof POOL_STALLED)[number];

export const ZPool = z.object({
  id: z.string(),
  ...poolFields,
  template_name: z.string(),
  category: z.string(),
  owner: z.string(),
  owner_name: z.string(),
  /** Why the pool prepares nothing now (pool disabled, template disabled or gone, a GPU template's pool outside its bookings), or null. */
  stalled: z.enum(POOL_STALLED).nullable(),
  /** Its template has a GPU profile: it prepares only within its bookings (booked as item `pool`). */
  needs_booking: z.boolean(),
  counts: ZPoolCounts,
});
export type TPool = z.infer<typeof ZPool>;

/** A pool a person may take a desktop from, as their desktops screen shows it. */
export const ZUserPool = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  template_name: z.string(),
  persistent: z.boolean(),
  /** ready: one click opens a prepared desktop; preparing: the person would wait; mine: they hold one already. */
  state: z.enum(['ready', 'preparing', 'full', 'mine']),
  prepared: z.number().int(),
  /** The person's own desktop from the pool (persistent pools, or one given and not given back yet). */
  desktop_id: z.string().nullable(),
  /** The person's place in the queue (1 = next), and a realistic wait in seconds, while they wait. */
  place: z.number().int().nullable(),
  wait_seconds: z.number().int().nullable(),
  viewers: z.array(ZViewer),
});
export type TUserPool = z.infer<typeof ZUserPool>;

/** POST /desktop-pools/:id/take's body: the browser viewer the page opens at once (its ticket comes with the desktop). */
export const ZPoolTake = z.object({ viewer: z.enum(['browser-vnc', 'browser-rdp']).optional() }).strict();
export type TPoolTake = z.infer<typeof ZPoolTake>;

/** POST /desktop-pools/:id/take: the desktop given (its viewer may open: the ticket of the one asked, when it can open
 *  now), or the person's place in the queue. */
export const ZPoolTakeAnswer = z.union([
  z.object({ kind: z.literal('desktop'), desktop_id: z.string(), viewer: ZViewerBrowser.optional() }),
  z.object({ kind: z.literal('queued'), place: z.number().int(), wait_seconds: z.number().int() }),
]);
export type TPoolTakeAnswer = z.infer<typeof ZPoolTakeAnswer>;

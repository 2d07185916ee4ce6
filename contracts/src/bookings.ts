import { z } from 'zod';

/**
 * Bookings of reservable resources (GPU profiles) and the admin planner (spec core §3, §5, §7;
 * spec 001 §3 "Planner", §7 "Admin planner"; reference §2.9, §3 and §6.2).
 *
 * Dates on the wire are `%Y-%m-%dT%H:%M%z` in UTC, e.g. `2025-05-01T10:00+0000`. Inputs also
 * accept the web's `YYYY-MM-DDTHH:mm+00:00`, `Z`, seconds and milliseconds (full ISO).
 */

/* ------------------------------------------------------------------------------------ dates */

const pad = (n: number) => String(n).padStart(2, '0');

/** `2025-05-01T10:00+0000` (UTC, minute precision), as the original system writes dates. */
export function formatBookingDate(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}+0000`;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Parses every accepted wire form; null when it is not one (a zone is required). A `+` that a
 * query string turned into a space (`…T10:00 0000`) is read as the `+` it was.
 */
export function parseBookingDate(s: string): Date | null {
  const m = DATE_RE.exec(s.trim().replace(/(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}:?\d{2})$/, '$1+$2'));
  if (!m) return null;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const ms = frac ? Math.round(Number(`0.${frac}`) * 1000) : 0;
  let t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec ?? 0), ms);
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi)));
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59) return null;
  if (zone !== 'Z') {
    const sign = zone![0] === '-' ? -1 : 1;
    const digits = zone!.slice(1).replace(':', '');
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    if (offset > 14 * 60) return null;
    t -= sign * offset * 60_000;
  }
  return new Date(t);
}

/** An input date in any accepted wire form (validated; the server parses it with parseBookingDate). */
export const ZBookingDateInput = z
  .string()
  .max(40)
  .refine((s) => parseBookingDate(s) !== null, { message: 'Expected a date like 2025-05-01T10:00+0000' });
/** An output date, always `%Y-%m-%dT%H:%M%z`. */
export const ZBookingDate = z.string();

/* ------------------------------------------------------------------------------- constants */

export const BOOKING_MIN_MINUTES = 5;
/** Start-now: at least 30 minutes, at most 12 hours, end times in 30-minute steps. */
export const MIN_AUTOBOOKING_MINUTES = 30;
export const MAX_BOOKING_MINUTES = 12 * 60;
export const START_NOW_STEP_MINUTES = 30;
/** Warnings to the desktop's user before a booking ends (minutes before the end, and their type). */
export const BOOKING_END_WARNINGS = [
  { minutes: 15, type: 'warning' },
  { minutes: 5, type: 'danger' },
] as const;
/** The msg_code of the live `msg` event sent before a booking ends. */
export const BOOKING_END_MSG_CODE = 'booking-end';
/** The msg_code sent when a plan boundary takes the desktop's GPU profile away. */
export const PLAN_END_MSG_CODE = 'plan-end';
/** Longest plan the planner accepts (days). */
export const PLAN_MAX_DAYS = 366;

/* ---------------------------------------------------------------------------------- events */

/** What a booking is for: a desktop, a deployment, or a desktop pool (ours: a pool of a GPU template prepares only within its bookings). */
export const BOOKING_ITEM_TYPES = ['desktop', 'deployment', 'pool'] as const;
export const ZBookingItemType = z.enum(BOOKING_ITEM_TYPES);
export type TBookingItemType = z.infer<typeof ZBookingItemType>;

export const BOOKING_EVENT_TYPES = ['event', 'available', 'unavailable', 'overridable'] as const;
export const ZBookingEventType = z.enum(BOOKING_EVENT_TYPES);
export type TBookingEventType = z.infer<typeof ZBookingEventType>;

export const ZBookingPlanUse = z.object({
  plan_id: z.string(),
  item_id: z.string(),
  subitem_id: z.string(),
  priority: z.number(),
  units_booked: z.number(),
});

/** A booking (reference §2.9 booking event object; element_* repeat item_* as the spec names them). */
export const ZBooking = z.object({
  id: z.string(),
  item_id: z.string(),
  item_type: ZBookingItemType,
  element_id: z.string(),
  element_type: ZBookingItemType,
  /** Name of the desktop or deployment, for the summary. */
  item_name: z.string(),
  user_id: z.string(),
  title: z.string(),
  units: z.number(),
  reservables: z.object({ vgpus: z.array(z.string()) }),
  start: ZBookingDate,
  end: ZBookingDate,
  plans: z.array(ZBookingPlanUse),
  /** The start is still ahead (it can be moved or deleted without stopping anything). */
  editable: z.boolean(),
  /** It is in progress now. */
  in_progress: z.boolean(),
  event_type: z.literal('event'),
});
export type TBooking = z.infer<typeof ZBooking>;

/**
 * Availability of the item's profile in a time segment: `available` (free units for this
 * item), `overridable` (taken by lower-priority bookings that this user would displace),
 * `unavailable` (nothing free, or no plan offers the profile).
 */
export const ZAvailability = z.object({
  id: z.string(),
  start: ZBookingDate,
  end: ZBookingDate,
  /** Free units, or "Enough" when more than any item could need. */
  units: z.union([z.number(), z.literal('Enough')]),
  /** Plans that make up the segment. */
  ids: z.array(z.string()),
  subitem_id: z.string(),
  event_type: z.enum(['available', 'unavailable', 'overridable']),
});
export type TAvailability = z.infer<typeof ZAvailability>;

/** Query of the booking lists: the range shown by the calendar. */
export const ZBookingRangeQuery = z.object({ startDate: ZBookingDateInput, endDate: ZBookingDateInput });
/** all: bookings and availability; event: the bookings; availability: the availability. */
export const BOOKING_RETURN_TYPES = ['all', 'event', 'availability'] as const;
export type TBookingReturnType = (typeof BOOKING_RETURN_TYPES)[number];
export const ZBookingItemParams = z.object({
  itemId: z.string().min(1).max(64),
  itemType: ZBookingItemType,
  returnType: z.enum(BOOKING_RETURN_TYPES).optional(),
});
/**
 * GET /bookings/user/{itemId}/{itemType}[/{returnType}]: one array, as the original answers it —
 * the item's bookings, then (for `all`) its availability; `event_type` tells them apart.
 */
export const ZItemBookings = z.array(z.discriminatedUnion('event_type', [ZBooking, ZAvailability]));
export type TItemBookings = z.infer<typeof ZItemBookings>;
/** GET /bookings/user: the user's desktop bookings and those of the deployments their desktops belong to. */
export const ZUserBookings = z.array(ZBooking);

/** GET /bookings/priority/{itemType}/{itemId}: the most restrictive rule across the item's profiles. */
export const ZBookingPriority = z.object({
  priority: z.record(z.string(), z.number()),
  forbid_time: z.number(),
  max_time: z.number().nullable(),
  max_items: z.number().nullable(),
  name: z.string(),
});
export type TBookingPriority = z.infer<typeof ZBookingPriority>;
/**
 * GET /bookings/priority/{itemType}/{itemId}: the rule, and what one booking of the item takes —
 * its units (1 for a desktop, one per desktop for a deployment) and its profiles (fields the
 * original does not send; its clients read only the rule).
 */
export const ZItemPriority = ZBookingPriority.extend({ units: z.number(), reservables: z.object({ vgpus: z.array(z.string()) }) });
export type TItemPriority = z.infer<typeof ZItemPriority>;
export const ZBookingPriorityParams = z.object({ itemType: ZBookingItemType, itemId: z.string().min(1).max(64) });

export const BOOKING_TITLE_MAX = 100;
/** POST /booking/event. With now:true (desktops only) the booking starts at the server's now. */
export const ZNewBooking = z.object({
  element_id: z.string().min(1).max(64),
  element_type: ZBookingItemType,
  title: z.string().trim().max(BOOKING_TITLE_MAX).optional(),
  start: ZBookingDateInput,
  end: ZBookingDateInput,
  now: z.boolean().optional(),
});
export type TNewBooking = z.input<typeof ZNewBooking>;
/** PUT /booking/event/{id} (form data; JSON is accepted too). */
export const ZBookingUpdate = z.object({
  title: z.string().trim().max(BOOKING_TITLE_MAX).optional(),
  start: ZBookingDateInput,
  end: ZBookingDateInput,
});
export type TBookingUpdate = z.input<typeof ZBookingUpdate>;

/** GET /booking/max_booking_date/{desktopId} */
export const ZMaxBookingDate = z.object({ max_booking_date: ZBookingDate });
export type TMaxBookingDate = z.infer<typeof ZMaxBookingDate>;

/** GET /booking/reservables_available: profiles the user may switch to and start now (428 no_available_profile). */
export const ZReservableAvailable = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  max_booking_date: ZBookingDate,
});
export const ZReservablesAvailable = z.object({ reservables_available: z.array(ZReservableAvailable) });
export type TReservablesAvailable = z.infer<typeof ZReservablesAvailable>;

/** What the start-now and cannot-start dialogs work with (spec core §3 "Start-now data"). */
export type TStartNowData = {
  max_booking_date: string | null;
  reservables_available: z.infer<typeof ZReservableAvailable>[];
  profile: string | null;
  action: 'start' | 'book' | 'change_profile';
};

/* --------------------------------------------------------------------------------- planner */

/** A GPU profile (reservable subitem). */
export const ZReservableSubitem = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  brand: z.string(),
  model: z.string(),
  profile: z.string(),
  units: z.number(),
  item_type: z.literal('vgpus'),
});
export type TReservableSubitem = z.infer<typeof ZReservableSubitem>;

/** A physical card (reservable item) and the profiles it can offer, one at a time. */
export const ZReservableItem = z.object({
  id: z.string(),
  name: z.string(),
  brand: z.string(),
  model: z.string(),
  description: z.string(),
  item_type: z.literal('gpus'),
  enabled: z.boolean(),
  subitems: z.array(ZReservableSubitem),
});
export type TReservableItem = z.infer<typeof ZReservableItem>;

export const RESERVABLE_ITEM_TYPES = ['gpus'] as const;
export const ZReservableItemType = z.enum(RESERVABLE_ITEM_TYPES);
/** GET /admin/reservables: the kinds of reservable items, by name (`["gpus"]`, as the original answers). */
export const ZReservableKinds = z.array(ZReservableItemType);

/** A plan: card `item_id` offers profile `subitem_id` with `units` between start and end. */
export const ZPlan = z.object({
  id: z.string(),
  item_type: ZReservableItemType,
  item_id: z.string(),
  subitem_id: z.string(),
  /** The profile's display name. */
  subitem_name: z.string(),
  start: ZBookingDate,
  end: ZBookingDate,
  units: z.number(),
  user_id: z.string(),
  /** Units already booked in this plan (a plan with bookings cannot lose them). */
  units_booked: z.number(),
  editable: z.boolean(),
});
export type TPlan = z.infer<typeof ZPlan>;

export const ZPlannerRangeParams = z.object({ itemId: z.string().min(1).max(64), start: ZBookingDateInput, end: ZBookingDateInput });
/** POST /admin/reservables_planner */
export const ZNewPlan = z.object({
  item_type: ZReservableItemType,
  item_id: z.string().min(1).max(64),
  subitem_id: z.string().min(1).max(64),
  start: ZBookingDateInput,
  end: ZBookingDateInput,
});
export type TNewPlan = z.input<typeof ZNewPlan>;
/** PUT /admin/reservables_planner/{id} */
export const ZPlanUpdate = z.object({
  subitem_id: z.string().min(1).max(64),
  start: ZBookingDateInput,
  end: ZBookingDateInput,
});
export type TPlanUpdate = z.input<typeof ZPlanUpdate>;

/** GET /domains/allowed/reservables: the profiles the user may pick for a desktop. */
export const ZAllowedReservables = z.object({
  vgpus: z.array(z.object({ id: z.string(), name: z.string(), description: z.string(), units: z.number() })),
});
export type TAllowedReservables = z.infer<typeof ZAllowedReservables>;

/* ---------------------------------------------------------------------------------- socket */

/** Deleted bookings and plans are announced with their last state. */
export type TBookingSocketEvents = {
  booking_add: TBooking;
  booking_update: TBooking;
  booking_delete: TBooking;
  bookingitem_add: TBooking;
  bookingitem_update: TBooking;
  bookingitem_delete: TBooking;
  plan_add: TPlan;
  plan_update: TPlan;
  plan_delete: TPlan;
};

/** params of the `msg` event sent before a booking ends (msg_code booking-end) or a plan ends (plan-end). */
export const ZBookingEndMessageParams = z.object({
  date: ZBookingDate,
  minutes: z.number(),
  name: z.string(),
  desktop_id: z.string(),
});
export type TBookingEndMessageParams = z.infer<typeof ZBookingEndMessageParams>;

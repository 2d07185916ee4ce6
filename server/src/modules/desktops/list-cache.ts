import { eq } from 'drizzle-orm';
import { schema } from '../../db';
import { parseBookingDate } from '@vdi/contracts';
import { listDesktops, pick, userDesktopsWhere, type DesktopListOptions, type ViewSource } from '../shared/desktop-view';

/** A user's list answer as sent, with what it was built from. */
type Entry = { rev: number; validUntil: number; body: string; total: number | null; bytes: number };

/** At most this many answers are kept, and this much text (a 1,000-desktop list is about 1 MB). */
const MAX_ENTRIES = 2_000;
const MAX_BYTES = 64 * 1024 * 1024;

/**
 * `GET /user/desktops` answers, kept per user and query while they stand. A user's counter in
 * `desktop_list_revs` is raised by database triggers on every write the list shows (see the
 * table's comment), so one primary-key read tells whether a kept answer is still the answer —
 * whichever server process, or whatever hand, wrote. The only other input, the clock, is bounded
 * by each answer's `validUntil`: the earliest end of a booking it shows, after which the
 * desktop's next booking is another one.
 */
export function createDesktopListCache(src: ViewSource) {
  const { db, clock } = src;
  const entries = new Map<string, Entry>();
  let bytes = 0;

  const drop = (key: string) => {
    const e = entries.get(key);
    if (!e) return;
    bytes -= e.bytes;
    entries.delete(key);
  };
  const keep = (key: string, entry: Entry) => {
    drop(key);
    entries.set(key, entry);
    bytes += entry.bytes;
    // Oldest first (a Map iterates in insertion order; a hit re-inserts its key).
    for (const oldest of entries.keys()) {
      if (entries.size <= MAX_ENTRIES && bytes <= MAX_BYTES) break;
      drop(oldest);
    }
  };

  const revOf = async (userId: string) => {
    const [row] = await db
      .select({ rev: schema.desktopListRevs.rev })
      .from(schema.desktopListRevs)
      .where(eq(schema.desktopListRevs.userId, userId));
    return Number(row?.rev ?? 0);
  };

  const building = new Map<string, Promise<Omit<Entry, 'rev' | 'bytes'>>>();
  const build = async (userId: string, opts: DesktopListOptions, now: number) => {
    const list = await listDesktops(src, userDesktopsWhere(userId), opts);
    let validUntil = Number.POSITIVE_INFINITY;
    for (const { view } of list.items) {
      // Shown to the minute, earlier than or at the booking's end: never kept too long.
      const end = view.next_booking_end ? (parseBookingDate(view.next_booking_end)?.getTime() ?? now) : Infinity;
      if (end < validUntil) validUntil = end;
    }
    const items = list.items.map(({ view }) => (opts.fields ? pick(view, opts.fields) : view));
    return { validUntil, body: JSON.stringify(items), total: list.total };
  };

  return {
    /** The user's list as JSON text (and, when paged, the whole list's length): kept, or built and kept. */
    async answer(userId: string, opts: DesktopListOptions = {}): Promise<{ body: string; total: number | null }> {
      const key = `${userId}\u0000${opts.page ?? ''}\u0000${opts.per_page ?? ''}\u0000${opts.fields?.join(',') ?? ''}`;
      // Read before the list: a write between the two leaves a newer counter, so the next call rebuilds.
      const rev = await revOf(userId);
      const now = clock.now().getTime();
      const kept = entries.get(key);
      if (kept && kept.rev === rev && now < kept.validUntil) {
        entries.delete(key);
        entries.set(key, kept);
        return kept;
      }
      // Calls that miss together wait for one build (a thousand desktops cost tens of milliseconds).
      const flightKey = `${key}\u0000${rev}`;
      let flight = building.get(flightKey);
      if (!flight) {
        flight = build(userId, opts, now).finally(() => building.delete(flightKey));
        building.set(flightKey, flight);
      }
      const built = await flight;
      keep(key, { rev, ...built, bytes: built.body.length });
      return built;
    },
  };
}
export type DesktopListCache = ReturnType<typeof createDesktopListCache>;

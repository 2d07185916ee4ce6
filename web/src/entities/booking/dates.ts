import dayjs from 'dayjs';
import { parseBookingDate } from '@vdi/contracts';

/** Local form of the spec (core §9): YYYY-MM-DD HH:mm. */
export const LOCAL_FORMAT = 'YYYY-MM-DD HH:mm';
const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})$/;

export const toDate = (value: string | Date | null | undefined): Date | null => (value instanceof Date ? value : value ? parseBookingDate(value) : null);

export function formatLocalDate(value: string | Date | null | undefined): string {
  const d = toDate(value);
  return d ? dayjs(d).format(LOCAL_FORMAT) : '';
}

/** Reads YYYY-MM-DD HH:mm typed by a person (local time); null when it is not a real date. */
export function parseLocal(text: string): Date | null {
  const m = LOCAL_RE.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi] = m.slice(1).map(Number) as [number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, 0, 0);
  const same = date.getFullYear() === y && date.getMonth() === mo - 1 && date.getDate() === d && date.getHours() === h && date.getMinutes() === mi;
  return same ? date : null;
}

/** UTC ISO on the wire (spec core §9). */
export const toWire = (d: Date) => d.toISOString();

/**
 * The range a calendar loads: from the Monday on or before the first visible day to the end of the
 * Sunday on or after the last one (spec core §9: "last Monday to next Sunday").
 */
export function loadRange(visibleStart: Date, visibleEnd: Date): { start: Date; end: Date } {
  const start = new Date(visibleStart);
  start.setHours(0, 0, 0, 0);
  start.setDate(start.getDate() - ((start.getDay() + 6) % 7));
  // visibleEnd is exclusive: the last visible day is the one before it.
  const last = new Date(visibleEnd.getTime() - 1);
  const end = new Date(last);
  end.setHours(0, 0, 0, 0);
  end.setDate(end.getDate() + ((7 - end.getDay()) % 7) + 1);
  return { start, end };
}

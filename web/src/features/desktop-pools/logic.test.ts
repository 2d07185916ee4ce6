import { describe, expect, it } from 'vitest';
import { ZPoolCreate, type TPool } from '@vdi/contracts';
import { barParts, bodyOf, draftOf, NEW_POOL, newScheduleRow, weekdayNames } from './logic';

const counts = { prepared: 2, preparing: 1, in_use: 3, kept: 0, waiting: 0, target: 4, by_host: [] };

describe('desktop pools form and numbers', () => {
  it('a new pool draft is a valid creation body; give-back reasons switched off are sent as null', () => {
    const body = bodyOf({ ...NEW_POOL, name: ' Class A ', template_id: 't1', viewer_closed: false, daily: true, daily_at: '21:30', schedule: [{ ...newScheduleRow(3), days: [5, 1] }] });
    expect(ZPoolCreate.safeParse(body).success).toBe(true);
    expect(body.name).toBe('Class A');
    expect(body.give_back).toEqual({ on_sign_out: false, viewer_closed_minutes: null, at: '21:30' });
    expect(body.schedule[0]!.days).toEqual([1, 5]);
  });

  it("a pool read back makes the same body it was made from", () => {
    const body = bodyOf({ ...NEW_POOL, name: 'Class B', template_id: 't2', persistent: true, prepared: 0 });
    const pool: TPool = { ...body, id: 'p', template_name: 'T', category: 'default', owner: 'u', owner_name: 'U', stalled: null, needs_booking: false, counts };
    expect(bodyOf(draftOf(pool))).toEqual(body);
  });

  it('the bar is against the maximum, or the total when more are held than the maximum (after a shrink)', () => {
    expect(barParts(counts, 10)).toMatchObject({ prepared: 20, preparing: 10, in_use: 30, target: 70 });
    expect(barParts(counts, 3)).toMatchObject({ prepared: (2 / 6) * 100, in_use: 50, target: 100 });
  });

  it('weekdays from Monday in the language asked', () => {
    expect(weekdayNames('en')).toEqual(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']);
    expect(weekdayNames('de')[0]).toMatch(/^Mo/);
  });
});

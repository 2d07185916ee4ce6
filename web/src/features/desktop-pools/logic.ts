import { NOT_SHARED, type TAllowed, type TPool, type TPoolCounts, type TPoolUpdate, type TPoolScheduleRow, type TViewer } from '@vdi/contracts';
import { dateTimeFormat } from '../../i18n/intl';

/** The form's values: the pool's fields, with the give-back reasons as switches and their values kept while off. */
export type PoolDraft = {
  name: string;
  description: string;
  template_id: string | null;
  allowed: TAllowed;
  max_desktops: number;
  prepared: number;
  schedule: TPoolScheduleRow[];
  persistent: boolean;
  on_sign_out: boolean;
  viewer_closed: boolean;
  viewer_closed_minutes: number;
  daily: boolean;
  daily_at: string;
  viewers: TViewer[];
  may_restart: boolean;
  enabled: boolean;
};

export const NEW_POOL: PoolDraft = {
  name: '',
  description: '',
  template_id: null,
  allowed: NOT_SHARED,
  max_desktops: 2,
  prepared: 1,
  schedule: [],
  persistent: false,
  on_sign_out: false,
  viewer_closed: true,
  viewer_closed_minutes: 30,
  daily: false,
  daily_at: '22:00',
  viewers: ['browser-vnc'],
  may_restart: true,
  enabled: true,
};

/** A new timetable row: school days in the morning, as many prepared as the pool holds now. */
export const newScheduleRow = (prepared: number): TPoolScheduleRow => ({ days: [1, 2, 3, 4, 5], from: '08:45', to: '14:00', prepared });

export function draftOf(p: TPool): PoolDraft {
  return {
    name: p.name,
    description: p.description,
    template_id: p.template_id,
    allowed: p.allowed,
    max_desktops: p.max_desktops,
    prepared: p.prepared,
    schedule: p.schedule,
    persistent: p.persistent,
    on_sign_out: p.give_back.on_sign_out,
    viewer_closed: p.give_back.viewer_closed_minutes !== null,
    viewer_closed_minutes: p.give_back.viewer_closed_minutes ?? 30,
    daily: p.give_back.at !== null,
    daily_at: p.give_back.at ?? '22:00',
    viewers: p.permissions.viewers,
    may_restart: p.permissions.may_restart,
    enabled: p.enabled,
  };
}

/** The body of POST /desktop-pools (PUT takes the same fields). */
export function bodyOf(d: PoolDraft): Required<TPoolUpdate> {
  return {
    name: d.name.trim(),
    description: d.description.trim(),
    template_id: d.template_id ?? '',
    allowed: d.allowed,
    max_desktops: d.max_desktops,
    prepared: d.prepared,
    schedule: d.schedule.map((r) => ({ ...r, days: [...r.days].sort((a, b) => a - b) })),
    persistent: d.persistent,
    give_back: { on_sign_out: d.on_sign_out, viewer_closed_minutes: d.viewer_closed ? d.viewer_closed_minutes : null, at: d.daily ? d.daily_at : null },
    permissions: { viewers: d.viewers, may_restart: d.may_restart },
    enabled: d.enabled,
  };
}

/**
 * The stacked bar's parts, as percentages of the pool's maximum (in use, kept, prepared, preparing, in this order), and
 * where the prepared part aims to end now (`target`: after the desktops in use and kept, the prepared count aimed at).
 */
export function barParts(c: TPoolCounts, max: number) {
  const total = Math.max(max, c.in_use + c.kept + c.prepared + c.preparing, 1);
  const pct = (n: number) => (n / total) * 100;
  return { in_use: pct(c.in_use), kept: pct(c.kept), prepared: pct(c.prepared), preparing: pct(c.preparing), target: pct(Math.min(c.in_use + c.kept + c.target, total)) };
}

/** The weekdays 1 (Monday) … 7 (Sunday) shortly in a language, from the browser's own names. */
export function weekdayNames(lang: string): string[] {
  const f = dateTimeFormat(lang, { weekday: 'short', timeZone: 'UTC' });
  // 2024-01-01 was a Monday.
  return [1, 2, 3, 4, 5, 6, 7].map((d) => f.format(new Date(Date.UTC(2024, 0, d))));
}

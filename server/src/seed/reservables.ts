import { and, eq } from 'drizzle-orm';
import { BUILT_IN_TEXTS as N } from '@vdi/contracts';
import { schema, type Db } from '../db';
import type { DomainRow } from '../modules/shared/domains';
import type { Engine } from '../engine';
import { createDesktopFromTemplate } from '../modules/desktops/create';
import { SHARED_WITH_EVERYONE } from '../modules/access/permissions';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const DEMO_GPU_ID = 'demo-nvidia-a40';
export const DEMO_PROFILES = [
  { id: 'NVIDIA-A40-2Q', name: 'NVIDIA A40 · 2 GB', description: N.gpu_profile_2q_description, profile: '2Q', units: 24 },
  { id: 'NVIDIA-A40-4Q', name: 'NVIDIA A40 · 4 GB', description: N.gpu_profile_4q_description, profile: '4Q', units: 12 },
];

// The default booking rules (reference §6.2) are written once by migration 0010; the console edits them.

/**
 * First start with the demo: one GPU card (an NVIDIA A40, no real hardware: a booking reserves
 * units of a profile) offering 2Q for four weeks, then 4Q for two.
 */
export async function seedReservables(db: Db, opts: { demo: boolean; adminId?: string; now?: Date }) {
  if (!opts.demo || !opts.adminId) return;
  await db.insert(schema.reservableSubitems).values(
    DEMO_PROFILES.map((p) => ({ ...p, itemType: 'vgpus' as const, brand: 'NVIDIA', model: 'A40', priorityId: '', allowed: SHARED_WITH_EVERYONE })),
  ).onConflictDoNothing();
  await db.insert(schema.reservableItems).values({
    id: DEMO_GPU_ID, itemType: 'gpus', name: 'NVIDIA A40 #1', brand: 'NVIDIA', model: 'A40',
    description: N.gpu_card_description, subitemIds: DEMO_PROFILES.map((p) => p.id),
  }).onConflictDoNothing();
  const now = opts.now ?? new Date();
  const start = new Date(Math.floor(now.getTime() / HOUR) * HOUR);
  const switchAt = new Date(start.getTime() + 28 * DAY);
  await db.insert(schema.reservablePlans).values([
    { id: 'demo-plan-2q', itemId: DEMO_GPU_ID, subitemId: DEMO_PROFILES[0]!.id, start, end: switchAt, units: DEMO_PROFILES[0]!.units, userId: opts.adminId },
    { id: 'demo-plan-4q', itemId: DEMO_GPU_ID, subitemId: DEMO_PROFILES[1]!.id, start: switchAt, end: new Date(switchAt.getTime() + 14 * DAY), units: DEMO_PROFILES[1]!.units, userId: opts.adminId },
  ]).onConflictDoNothing();
}

/** The demo `user` gets a desktop that needs the 2Q profile (it starts only within a booking). */
export async function seedGpuDesktop(db: Db, engine: Engine, template: DomainRow) {
  const [user] = await db.select().from(schema.users).where(and(eq(schema.users.username, 'user'), eq(schema.users.categoryId, 'default')));
  if (!user) return;
  const [profile] = await db.select().from(schema.reservableSubitems).where(eq(schema.reservableSubitems.id, DEMO_PROFILES[0]!.id));
  if (!profile) return;
  await createDesktopFromTemplate(db, engine, template, user, {
    name: N.gpu_desktop,
    description: N.gpu_desktop_description,
    persistent: true,
    status: 'Stopped',
    hardware: { ...template.hardware, reservables: { vgpus: [profile.id] } },
  });
}

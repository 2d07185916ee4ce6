import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { BUILT_IN_TEXTS as N } from '@vdi/contracts';
import { schema, type Db } from '../db';
import type { DomainHardware, DomainImage, GuestProperties } from '../db/schema';
import type { Engine } from '../engine';
import type { DemoGuestImages } from '../engine/guest-image';
import { createDesktopFromTemplate, randomMac } from '../modules/desktops/create';
import { SHARED_WITH_EVERYONE } from '../modules/access/permissions';
import { seedGpuDesktop } from './reservables';

/** Hardware of the demo template: small, because demo guests boot under TCG on our machines. */
export const DEMO_HARDWARE: DomainHardware = {
  vcpus: 1, memoryMb: 256, bootOrder: ['disk'], diskBus: 'virtio', interfaces: [{ id: 'default', mac: '' }],
  videos: ['default'], graphics: ['default'], isos: [], floppies: [], reservables: { vgpus: null },
};
export const DEMO_GUEST: GuestProperties = {
  credentials: { username: 'demo', password: 'demo' },
  fullscreen: false,
  viewers: { browser_vnc: { options: null }, file_spice: { options: null } },
};

const DESKTOPS_BY_USER: Record<string, string[]> = {
  admin: [N.demo_desktop], manager: [N.demo_desktop], advanced: [N.demo_desktop], user: [N.demo_desktop, N.lab_desktop],
  student01: [N.demo_desktop], student02: [N.demo_desktop], student03: [N.demo_desktop], student04: [N.demo_desktop],
};

type Owner = Pick<typeof schema.users.$inferSelect, 'id' | 'categoryId' | 'groupId'>;

/**
 * A template shared with everyone, owned by `owner`, on a read-only copy of the image `disk`.
 * Its interfaces get fresh MACs. `id` (optional) makes seeding it again recognisable.
 */
export async function seedTemplate(
  db: Db,
  engine: Engine,
  owner: Owner,
  disk: string,
  t: { id?: string; name: string; description: string; hardware: DomainHardware; guestProperties: GuestProperties; image: DomainImage; icon: string },
) {
  const templateId = t.id ?? randomUUID();
  const storageId = randomUUID();
  const path = engine.disks.pathFor('template', storageId);
  const info_ = await engine.disks.importTemplate(disk, path); // copied, read-only: a template base is never written again
  await db.insert(schema.storage).values({ id: storageId, userId: owner.id, kind: 'template', path, actualSize: info_.actualSize, virtualSize: info_.virtualSize });
  const [template] = await db
    .insert(schema.domains)
    .values({
      id: templateId, kind: 'template', name: t.name, userId: owner.id, categoryId: owner.categoryId, groupId: owner.groupId,
      description: t.description, status: 'Stopped', persistent: false,
      hardware: { ...t.hardware, interfaces: t.hardware.interfaces.map((i) => ({ id: i.id, mac: randomMac() })) }, guestProperties: t.guestProperties,
      image: t.image, icon: t.icon, allowed: SHARED_WITH_EVERYONE,
    })
    .returning();
  await db.insert(schema.domainDisks).values({ domainId: templateId, storageId, position: 0 });
  return template!;
}

/**
 * The demo template (the 13 MB guest, read-only, shared with everyone) and a few desktops per
 * demo account; done once, when there is no template yet.
 */
export async function seedDemoDesktops(db: Db, engine: Engine, images: DemoGuestImages): Promise<boolean> {
  const existing = await db.select({ id: schema.domains.id }).from(schema.domains).where(eq(schema.domains.kind, 'template')).limit(1);
  if (existing.length > 0) return false;
  const [admin] = await db.select().from(schema.users).where(and(eq(schema.users.username, 'admin'), eq(schema.users.categoryId, 'default')));
  if (!admin) return false;

  const template = await seedTemplate(db, engine, admin, images.disk, {
    name: N.demo_template, description: N.demo_template_description,
    hardware: DEMO_HARDWARE, guestProperties: DEMO_GUEST, image: { id: '1.jpg', type: 'stock', url: '/assets/img/desktops/stock/1.jpg' }, icon: 'fa-linux',
  });

  const users = await db.select().from(schema.users).where(and(eq(schema.users.categoryId, 'default'), inArray(schema.users.username, Object.keys(DESKTOPS_BY_USER))));
  for (const user of users) {
    for (const name of DESKTOPS_BY_USER[user.username] ?? []) {
      await createDesktopFromTemplate(db, engine, template, user, { name, persistent: true, status: 'Stopped', description: N.demo_desktop_description });
    }
  }
  await seedGpuDesktop(db, engine, template);
  return true;
}

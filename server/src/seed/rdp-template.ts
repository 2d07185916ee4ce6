import { and, eq } from 'drizzle-orm';
import { BUILT_IN_TEXTS, DEFAULT_GUEST_CREDENTIALS } from '@vdi/contracts';
import { schema, type Db } from '../db';
import type { DomainHardware, GuestProperties } from '../db/schema';
import type { Engine } from '../engine';
import { seedTemplate } from './demo-desktops';
import { stockImage } from '../modules/domains/images';

/** Its fixed id: seeding again finds it (also in the recycle bin), and never makes a second one. */
export const RDP_TEMPLATE_ID = '7d1f6c2e-5b0a-4c3e-9a61-3f2b8e4d0c15';
export const RDP_TEMPLATE_NAME = BUILT_IN_TEXTS.rdp_template;

/** On the NAT network for the internet and on the guest network for RDP; 512 MB holds the
 *  in-memory system (about 80 MB) and an X session. */
export const RDP_HARDWARE: DomainHardware = {
  vcpus: 1, memoryMb: 512, bootOrder: ['disk'], diskBus: 'virtio',
  interfaces: [{ id: 'default', mac: '' }, { id: 'wireguard', mac: '' }],
  videos: ['default'], graphics: ['default'], isos: [], floppies: [], reservables: { vgpus: null },
};
export const RDP_GUEST: GuestProperties = {
  credentials: { ...DEFAULT_GUEST_CREDENTIALS },
  fullscreen: false,
  viewers: { browser_vnc: { options: null }, browser_rdp: { options: null }, file_rdpgw: { options: null }, file_rdpvpn: { options: null } },
};

/**
 * The "Debian desktop (RDP)" template (engine/guest-image.ts `ensureRdpGuest`), shared with
 * everyone and owned by the default category's admin, with the RDP viewers ticked. Made once;
 * false when it exists already (or there is no admin to own it).
 */
export async function seedRdpTemplate(db: Db, engine: Engine, image: { disk: string }): Promise<boolean> {
  const [existing] = await db.select({ id: schema.domains.id }).from(schema.domains).where(eq(schema.domains.id, RDP_TEMPLATE_ID));
  if (existing) return false;
  const [admin] = await db.select().from(schema.users).where(and(eq(schema.users.username, 'admin'), eq(schema.users.categoryId, 'default')));
  if (!admin) return false;
  await seedTemplate(db, engine, admin, image.disk, {
    id: RDP_TEMPLATE_ID,
    name: RDP_TEMPLATE_NAME,
    description: BUILT_IN_TEXTS.rdp_template_description,
    hardware: RDP_HARDWARE,
    guestProperties: RDP_GUEST,
    image: stockImage('2.svg'), // "Terminal"
    icon: 'fa-linux',
  });
  return true;
}

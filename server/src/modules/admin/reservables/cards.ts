import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import {
  NOT_SHARED,
  type TAdminCard,
  type ZAdminCardCreate,
  type TAdminCardUpdate,
  type TAdminProfile,
  type ZAdminProfileCreate,
  type TAdminProfileUpdate,
} from '@vdi/contracts';
import type { AppContext } from '../../../context';
import { schema, type Db } from '../../../db';
import { auditActorOf, audit } from '../../../audit/record';
import { badRequest, conflict, notFound } from '../../../http/errors';
import { SHARED_WITH_EVERYONE } from '../../access/permissions';
import type { Bookings } from '../../bookings/service';

const items = schema.reservableItems;
const subs = schema.reservableSubitems;
type ItemRow = typeof items.$inferSelect;
type SubRow = typeof subs.$inferSelect;

/** Desktops and templates whose hardware asks for a profile. */
const usingProfile = (profile: string) => sql`${schema.domains.hardware}->'reservables'->'vgpus' ? ${profile}`;
/** Bookings not yet ended that hold units of the card (of one of its profiles). */
const bookingsOnCard = (now: Date, itemId: string, subitemId?: string) =>
  and(
    gt(schema.bookings.end, now),
    sql`${schema.bookings.plans} @> ${JSON.stringify([subitemId ? { item_id: itemId, subitem_id: subitemId } : { item_id: itemId }])}::jsonb`,
  );

/** `<brand>-<model>-<profile>`, as the original names its profiles (NVIDIA-A40-2Q). */
export const profileIdOf = (brand: string, model: string, profile: string) =>
  [brand, model, profile]
    .map((p) => p.trim().replace(/[^A-Za-z0-9_.]+/g, '-'))
    .filter(Boolean)
    .join('-')
    .slice(0, 64);

/**
 * GPU cards and their profiles in the console (admins only): the planner's reservable items and
 * subitems, which the seed no longer is the only source of. A card or profile that bookings not
 * yet ended still hold is not removed (409 reservable_has_bookings); a profile that desktops or
 * templates ask for is not deleted once no card offers it (409 reservable_in_use). Removing a
 * card or a profile from it removes its plans (and their scheduled boundary jobs).
 */
export function createCardAdmin(ctx: AppContext, bookings: Bookings) {
  const { db, clock } = ctx;

  async function profileViews(rows: SubRow[]): Promise<Map<string, TAdminProfile>> {
    const out = new Map<string, TAdminProfile>();
    if (rows.length === 0) return out;
    const used = await db
      .select({ id: subs.id, // Qualified by hand: drizzle leaves the column bare, which inside the subquery would be the desktop's id.
        n: sql<number>`(select count(*)::int from domains d where d.hardware->'reservables'->'vgpus' ? reservable_subitems.id)` })
      .from(subs)
      .where(inArray(subs.id, rows.map((r) => r.id)));
    for (const s of rows) {
      out.set(s.id, {
        id: s.id, name: s.name, description: s.description, brand: s.brand, model: s.model, profile: s.profile, units: s.units,
        item_type: 'vgpus', enabled: s.enabled, priority_id: s.priorityId, allowed: s.allowed,
        desktops: Number(used.find((u) => u.id === s.id)?.n ?? 0),
      });
    }
    return out;
  }

  async function cardViews(rows: ItemRow[]): Promise<TAdminCard[]> {
    if (rows.length === 0) return [];
    const ids = [...new Set(rows.flatMap((r) => r.subitemIds))];
    const profiles = await profileViews(ids.length ? await db.select().from(subs).where(inArray(subs.id, ids)) : []);
    const now = clock.now();
    const plans = await db
      .select({ itemId: schema.reservablePlans.itemId, n: sql<number>`count(*)::int` })
      .from(schema.reservablePlans)
      .where(and(inArray(schema.reservablePlans.itemId, rows.map((r) => r.id)), gt(schema.reservablePlans.end, now)))
      .groupBy(schema.reservablePlans.itemId);
    const held = await Promise.all(
      rows.map(async (r) => (await db.select({ n: sql<number>`count(*)::int` }).from(schema.bookings).where(bookingsOnCard(now, r.id)))[0]?.n ?? 0),
    );
    return rows.map((r, i) => ({
      id: r.id, name: r.name, brand: r.brand, model: r.model, description: r.description, item_type: 'gpus', enabled: r.enabled, hypervisor_id: r.hypervisorId,
      subitems: r.subitemIds.map((id) => profiles.get(id)).filter((p): p is TAdminProfile => Boolean(p)),
      plans: Number(plans.find((p) => p.itemId === r.id)?.n ?? 0),
      bookings: Number(held[i] ?? 0),
    }));
  }

  async function list(): Promise<TAdminCard[]> {
    return cardViews(await db.select().from(items).where(eq(items.itemType, 'gpus')).orderBy(asc(items.name), asc(items.id)));
  }

  async function cardById(id: string, dbOrTx: Db = db) {
    const [row] = await dbOrTx.select().from(items).where(and(eq(items.id, id), eq(items.itemType, 'gpus')));
    if (!row) throw notFound('reservable_item_not_found', 'No such GPU card');
    return row;
  }
  const view = async (id: string) => (await cardViews([await cardById(id)]))[0]!;

  /** The card's hypervisor must be one the installation has (400 otherwise). */
  async function assertHypervisor(dbOrTx: Db, hypervisorId: string | undefined) {
    if (hypervisorId === undefined) return;
    const [h] = await dbOrTx.select({ id: schema.hypervisors.id }).from(schema.hypervisors).where(eq(schema.hypervisors.id, hypervisorId)).for('share');
    if (!h) throw badRequest('validation_error', `No hypervisor has the id ${hypervisorId}`, { field: 'hypervisor_id' });
  }

  async function create(request: FastifyRequest, body: z.infer<typeof ZAdminCardCreate>) {
    const id = randomUUID();
    await db.transaction(async (tx) => {
      await assertHypervisor(tx, body.hypervisor_id);
      await tx.insert(items).values({
        id, itemType: 'gpus', name: body.name, brand: body.brand ?? '', model: body.model ?? '', description: body.description ?? '',
        enabled: body.enabled ?? true, subitemIds: [], hypervisorId: body.hypervisor_id ?? 'local',
      });
      await audit(tx, auditActorOf(request), { action: 'reservable.create', objectType: 'gpu', objectId: id, objectName: body.name, categoryId: null });
    });
    return view(id);
  }

  async function update(request: FastifyRequest, id: string, body: TAdminCardUpdate) {
    const card = await cardById(id);
    await db.transaction(async (tx) => {
      await assertHypervisor(tx, body.hypervisor_id);
      const { hypervisor_id: hypervisorId, ...rest } = body;
      const set = { ...rest, ...(hypervisorId !== undefined && { hypervisorId }) };
      if (Object.keys(set).length) await tx.update(items).set(set).where(eq(items.id, id));
      await audit(tx, auditActorOf(request), {
        action: 'reservable.update', objectType: 'gpu', objectId: id, objectName: body.name ?? card.name, categoryId: null, detail: { fields: Object.keys(body) },
      });
    });
    return view(id);
  }

  /** Refuses while bookings not ended hold units of the card (or of the profile on it). */
  async function assertNoBookings(itemId: string, subitemId?: string) {
    const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(schema.bookings).where(bookingsOnCard(clock.now(), itemId, subitemId));
    const n = Number(row?.n ?? 0);
    if (n > 0) throw conflict('reservable_has_bookings', `${n} booking(s) not yet ended hold it`, { bookings: n });
  }

  /** Profiles no card offers any more and nothing asks for go too; those desktops ask for stay (relinkable). */
  async function dropOrphans(tx: Db, ids: string[]) {
    for (const pid of ids) {
      const offered = await tx.select({ id: items.id }).from(items).where(sql`${items.subitemIds} ? ${pid}`).limit(1);
      if (offered.length) continue;
      const asked = await tx.select({ id: schema.domains.id }).from(schema.domains).where(usingProfile(pid)).limit(1);
      if (!asked.length) await tx.delete(subs).where(eq(subs.id, pid));
    }
  }

  /** Plans of the card (of one profile), whose scheduled jobs are cancelled once they are gone. */
  const plansOf = (tx: Db, itemId: string, subitemId?: string) =>
    tx
      .select({ id: schema.reservablePlans.id })
      .from(schema.reservablePlans)
      .where(and(eq(schema.reservablePlans.itemId, itemId), subitemId ? eq(schema.reservablePlans.subitemId, subitemId) : undefined));
  const cancelPlanJobs = async (planIds: string[]) => {
    for (const p of planIds) await bookings.scheduler.cancel(`plan:${p}`);
  };

  async function remove(request: FastifyRequest, id: string) {
    return bookings.exclusive(async () => {
      const card = await cardById(id);
      await assertNoBookings(id);
      const planIds = await db.transaction(async (tx) => {
        const plans = (await plansOf(tx, id)).map((p) => p.id);
        await tx.delete(items).where(eq(items.id, id)); // its plans go with it (on delete cascade)
        await dropOrphans(tx, card.subitemIds);
        await audit(tx, auditActorOf(request), {
          action: 'reservable.delete', objectType: 'gpu', objectId: id, objectName: card.name, categoryId: null, detail: { plans: plans.length },
        });
        return plans;
      });
      await cancelPlanJobs(planIds);
      return { id };
    });
  }

  async function addProfile(request: FastifyRequest, itemId: string, body: z.infer<typeof ZAdminProfileCreate>) {
    return bookings.exclusive(async () => {
      const card = await cardById(itemId);
      const pid = profileIdOf(card.brand, card.model, body.profile);
      await db.transaction(async (tx) => {
        const [existing] = await tx.select().from(subs).where(eq(subs.id, pid));
        if (!existing) {
          await tx.insert(subs).values({
            id: pid, itemType: 'vgpus', name: body.name, description: body.description ?? '', brand: card.brand, model: card.model,
            profile: body.profile, units: body.units, priorityId: body.priority_id ?? '', enabled: true,
            allowed: body.allowed ?? SHARED_WITH_EVERYONE,
          });
        }
        if (!card.subitemIds.includes(pid)) await tx.update(items).set({ subitemIds: [...card.subitemIds, pid] }).where(eq(items.id, itemId));
        await audit(tx, auditActorOf(request), {
          action: 'reservable.profile_add', objectType: 'gpu', objectId: itemId, objectName: card.name, categoryId: null,
          detail: { profile: pid, linked: Boolean(existing) },
        });
      });
      return view(itemId);
    });
  }

  async function profileOf(card: ItemRow, subitemId: string) {
    if (!card.subitemIds.includes(subitemId)) throw notFound('reservable_not_found', 'The card does not offer this profile');
    const [row] = await db.select().from(subs).where(eq(subs.id, subitemId));
    if (!row) throw notFound('reservable_not_found', 'No such profile');
    return row;
  }

  async function updateProfile(request: FastifyRequest, itemId: string, subitemId: string, body: TAdminProfileUpdate) {
    const card = await cardById(itemId);
    await profileOf(card, subitemId);
    const set: Partial<SubRow> = {};
    if (body.name !== undefined) set.name = body.name;
    if (body.description !== undefined) set.description = body.description;
    if (body.units !== undefined) set.units = body.units;
    if (body.priority_id !== undefined) set.priorityId = body.priority_id;
    if (body.enabled !== undefined) set.enabled = body.enabled;
    if (body.allowed !== undefined) set.allowed = { ...NOT_SHARED, ...body.allowed };
    await db.transaction(async (tx) => {
      if (Object.keys(set).length) await tx.update(subs).set(set).where(eq(subs.id, subitemId));
      await audit(tx, auditActorOf(request), {
        action: 'reservable.profile_update', objectType: 'gpu', objectId: itemId, objectName: card.name, categoryId: null,
        detail: { profile: subitemId, fields: Object.keys(body) },
      });
    });
    return view(itemId);
  }

  async function removeProfile(request: FastifyRequest, itemId: string, subitemId: string) {
    return bookings.exclusive(async () => {
      const card = await cardById(itemId);
      await profileOf(card, subitemId);
      await assertNoBookings(itemId, subitemId);
      const elsewhere = await db.select({ id: items.id }).from(items).where(and(sql`${items.subitemIds} ? ${subitemId}`, sql`${items.id} <> ${itemId}`)).limit(1);
      if (!elsewhere.length) {
        const [asked] = await db.select({ n: sql<number>`count(*)::int` }).from(schema.domains).where(usingProfile(subitemId));
        const n = Number(asked?.n ?? 0);
        if (n > 0) throw conflict('reservable_in_use', `${n} desktop(s) or template(s) ask for the profile`, { desktops: n });
      }
      const planIds = await db.transaction(async (tx) => {
        const plans = (await plansOf(tx, itemId, subitemId)).map((p) => p.id);
        if (plans.length) await tx.delete(schema.reservablePlans).where(inArray(schema.reservablePlans.id, plans));
        await tx.update(items).set({ subitemIds: card.subitemIds.filter((s) => s !== subitemId) }).where(eq(items.id, itemId));
        await dropOrphans(tx, [subitemId]);
        await audit(tx, auditActorOf(request), {
          action: 'reservable.profile_remove', objectType: 'gpu', objectId: itemId, objectName: card.name, categoryId: null,
          detail: { profile: subitemId, plans: plans.length },
        });
        return plans;
      });
      await cancelPlanJobs(planIds);
      return view(itemId);
    });
  }

  return { list, create, update, remove, addProfile, updateProfile, removeProfile };
}
export type CardAdmin = ReturnType<typeof createCardAdmin>;

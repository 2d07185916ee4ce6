import type { FastifyRequest } from 'fastify';
import { schema, type Db } from '../db';
import type { TAuditAction } from '@vdi/contracts';

/** Who did something: the signed-in caller, or nobody (a failed sign-in, the system). */
export type AuditActor = {
  id: string | null;
  name: string;
  role: string | null;
  categoryId: string | null;
  /** The client's address as the server sees it (`request.ip`, TRUST_PROXY-aware). */
  address: string | null;
};

/**
 * What was done. `action` is one of AUDIT_ACTIONS (contracts/audit.ts: `user.create`, `auth.sign_in`, …); the object is copied by value so
 * the entry survives the object's deletion. `categoryId` defaults to the object's category when
 * given, else the actor's: managers see the entries of their category.
 */
export type AuditEntry = {
  action: TAuditAction;
  objectType?: string;
  objectId?: string;
  objectName?: string;
  categoryId?: string | null;
  /** Extra facts (changed field names, counts…): never passwords, tokens or guest addresses. */
  detail?: Record<string, unknown>;
};

/** The actor of a request that passed the guard (or an anonymous one, e.g. a failed sign-in). */
export function auditActorOf(request: FastifyRequest, anonymous?: { name?: string; categoryId?: string | null }): AuditActor {
  const auth = request.auth;
  if (auth) {
    return {
      id: auth.user.id,
      name: auth.user.username,
      role: auth.role,
      categoryId: auth.user.categoryId,
      address: request.ip ?? null,
    };
  }
  return { id: null, name: anonymous?.name ?? '', role: null, categoryId: anonymous?.categoryId ?? null, address: request.ip ?? null };
}

/**
 * Appends one entry to the audit log. Pass the transaction that makes the change, so that the
 * entry is written if and only if the change is.
 */
export async function audit(db: Db, actor: AuditActor, entry: AuditEntry): Promise<void> {
  const [row] = await db.insert(schema.auditLog).values({
    actorId: actor.id,
    actorName: actor.name,
    actorRole: actor.role,
    action: entry.action,
    objectType: entry.objectType ?? '',
    objectId: entry.objectId ?? '',
    objectName: entry.objectName ?? '',
    categoryId: entry.categoryId !== undefined ? entry.categoryId : actor.categoryId,
    address: actor.address,
    detail: entry.detail ?? {},
  }).returning();
  // Live to the console (the entry may still roll back with its transaction: the console then
  // finds it gone when it reads the list again, which is all it does with the event).
  if (row) for (const l of auditListeners) l(row);
}

export type AuditRow = typeof schema.auditLog.$inferSelect;
const auditListeners = new Set<(row: AuditRow) => void>();
/** Hears of every entry written by this process (the /administrators socket). Answers the unsubscribe. */
export function onAuditEntry(listener: (row: AuditRow) => void): () => void {
  auditListeners.add(listener);
  return () => auditListeners.delete(listener);
}

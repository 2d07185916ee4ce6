import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { Db } from '../../db';
import { schema } from '../../db';

export const VIEWER_TOKEN_SECONDS = 60;
/** How often a process deletes the expired tokens (while it issues new ones): the table holds about two minutes' worth. */
export const VIEWER_TOKEN_SWEEP_MS = VIEWER_TOKEN_SECONDS * 1000;
const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');
/** When each database's expired tokens were last deleted by this process. */
const swept = new WeakMap<Db, number>();

/** A one-time token for one desktop's browser viewer; only its hash is stored. */
export async function issueViewerToken(db: Db, desktopId: string, userId: string | null, protocol: string, seconds = VIEWER_TOKEN_SECONDS): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  // The expired ones go while the new one is written (apart: neither waits for the other), at most once per
  // VIEWER_TOKEN_SWEEP_MS: a class opening thirty viewers at once makes one delete, not thirty.
  const now = Date.now();
  const sweep = now - (swept.get(db) ?? 0) >= VIEWER_TOKEN_SWEEP_MS;
  if (sweep) swept.set(db, now);
  await Promise.all([
    sweep && db.delete(schema.viewerTokens).where(lt(schema.viewerTokens.expiresAt, new Date(now))),
    db.insert(schema.viewerTokens).values({
      tokenHash: hashOf(token),
      desktopId,
      userId,
      protocol,
      expiresAt: new Date(Date.now() + seconds * 1000),
    }),
  ]);
  return token;
}

/** Spends a token: answers its desktop once, and never again or after it expired. */
export async function consumeViewerToken(db: Db, token: string, protocol: string) {
  const [row] = await db
    .update(schema.viewerTokens)
    .set({ usedAt: new Date() })
    .where(
      and(
        eq(schema.viewerTokens.tokenHash, hashOf(token)),
        eq(schema.viewerTokens.protocol, protocol),
        isNull(schema.viewerTokens.usedAt),
        gt(schema.viewerTokens.expiresAt, new Date()),
      ),
    )
    .returning();
  return row;
}

/** Passwords for VNC (RFB's DES auth uses 8 characters) and SPICE. */
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
export function viewerPassword(length: number) {
  return passwordOf(randomBytes(length));
}

/** A password of these bytes' length, in the viewers' alphabet. */
export const passwordOf = (bytes: Uint8Array) => [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');

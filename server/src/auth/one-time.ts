import { lt } from 'drizzle-orm';
import type { Db } from '../db';
import { schema } from '../db';
import { unauthorized } from '../http/errors';

/** Marks a token id as spent; a second use is refused (links in mails must not be replayable). */
export async function spendToken(db: Db, jti: string | undefined, expiresAtSeconds: number) {
  if (!jti) throw unauthorized('invalid_token', 'Invalid token');
  await db.delete(schema.usedTokens).where(lt(schema.usedTokens.expiresAt, new Date()));
  const inserted = await db
    .insert(schema.usedTokens)
    .values({ jti, expiresAt: new Date(expiresAtSeconds * 1000) })
    .onConflictDoNothing()
    .returning();
  if (inserted.length === 0) throw unauthorized('invalid_token', 'This link was already used');
}

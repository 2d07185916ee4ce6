import { eq } from 'drizzle-orm';
import { schema, type Db } from '../db';
import { ApiError } from '../http/errors';

export type ThrottleRule = { maxFailures: number; firstBlockSeconds: number; factor: number; maxBlockSeconds: number };

/** Sign-in: 10 failures, then 1 min, doubling on each further block, up to 15 min (reference §2.2). */
export const LOGIN_THROTTLE: ThrottleRule = { maxFailures: 10, firstBlockSeconds: 60, factor: 2, maxBlockSeconds: 900 };
/** Forgotten-password mails: 5 requests, same back-off. */
export const FORGOT_PASSWORD_THROTTLE: ThrottleRule = { ...LOGIN_THROTTLE, maxFailures: 5 };

/** After this long without failures the back-off starts over. */
const FORGET_AFTER_MS = 60 * 60 * 1000;

export function blockSeconds(rule: ThrottleRule, blockNumber: number): number {
  return Math.min(rule.firstBlockSeconds * rule.factor ** Math.max(0, blockNumber - 1), rule.maxBlockSeconds);
}

export function tooManyAttempts(retryAt: Date, code = 'login_too_many_attempts'): ApiError {
  return new ApiError(
    'too_many_requests',
    code,
    `Too many attempts. Retry after ${retryAt.toUTCString()}`,
    { retry_after: retryAt.toISOString() },
    { 'retry-after': retryAt.toUTCString() },
  );
}

export function createThrottle(db: Db, rule: ThrottleRule, code?: string) {
  const get = async (key: string) => (await db.select().from(schema.loginThrottle).where(eq(schema.loginThrottle.key, key)))[0];
  return {
    /** Throws 429 while the key is blocked. */
    async check(key: string, now = new Date()) {
      const row = await get(key);
      if (row?.blockedUntil && row.blockedUntil > now) throw tooManyAttempts(row.blockedUntil, code);
    },
    /** Counts one failure; the tenth (or any failure after a first block) blocks, doubling each time. */
    async fail(key: string, now = new Date()): Promise<Date | null> {
      const stored = await get(key);
      const row = stored && now.getTime() - stored.updatedAt.getTime() <= FORGET_AFTER_MS ? stored : undefined;
      const failures = (row?.failures ?? 0) + 1;
      const blocks = row?.blocks ?? 0;
      const block = failures >= rule.maxFailures || blocks > 0;
      const next = block
        ? { failures: 0, blocks: blocks + 1, blockedUntil: new Date(now.getTime() + blockSeconds(rule, blocks + 1) * 1000) }
        : { failures, blocks, blockedUntil: null };
      await db
        .insert(schema.loginThrottle)
        .values({ key, ...next, updatedAt: now })
        .onConflictDoUpdate({ target: schema.loginThrottle.key, set: { ...next, updatedAt: now } });
      return next.blockedUntil;
    },
    async reset(key: string) {
      await db.delete(schema.loginThrottle).where(eq(schema.loginThrottle.key, key));
    },
  };
}
export type Throttle = ReturnType<typeof createThrottle>;

import { and, eq, inArray, isNull, lt, or } from 'drizzle-orm';
import { schema, type Db } from '../db';
import { ApiError } from '../http/errors';
import { clientKey } from '../http/rate-limit';

/**
 * A leaky bucket of failures: it holds at most `maxFailures` and drains at `maxFailures` per
 * `windowSeconds`. When a failure fills it the key is blocked for `firstBlockSeconds`, each further
 * block `factor` times longer up to `maxBlockSeconds`; once the bucket has drained the back-off
 * starts over. `maxBlockSeconds: 0` never blocks (the bucket only measures, for slow-downs).
 */
export type ThrottleRule = {
  maxFailures: number;
  windowSeconds: number;
  firstBlockSeconds: number;
  factor: number;
  maxBlockSeconds: number;
};

const HOUR = 3600;
const BACK_OFF = { firstBlockSeconds: 60, factor: 2, maxBlockSeconds: 900 } as const;

/** Sign-in, per (client address, user name): 10 failures, then 1 min, doubling on each further block, up to 15 min (reference §2.2). */
export const LOGIN_THROTTLE: ThrottleRule = { maxFailures: 10, windowSeconds: HOUR, ...BACK_OFF };
/** Sign-in, per client address across user names: `LOGIN_ADDRESS_FAILURES` (30) failures an hour, then the same back-off. */
export const loginAddressRule = (failuresPerHour: number): ThrottleRule => ({ maxFailures: failuresPerHour, windowSeconds: HOUR, ...BACK_OFF });

/** Per user name from any address: never a block, a bounded wait before each attempt once it fails often. */
export type SlowdownRule = { freeFailures: number; windowSeconds: number; firstDelayMs: number; maxDelayMs: number };
/** After 10 failures within the hour every attempt waits 0.5 s, doubling per further failure, at most 8 s. */
export const LOGIN_ACCOUNT_SLOWDOWN: SlowdownRule = { freeFailures: 10, windowSeconds: HOUR, firstDelayMs: 500, maxDelayMs: 8000 };

/**
 * Wrong second-factor codes per person from any address (besides the sign-in limits per address): 10 an hour, then
 * the sign-in back-off (1 min doubling up to 15 min). Only someone who has the password reaches the code step, so
 * a block keeps out nobody but who has the password and not the second factor; it stops a guesser with many
 * addresses before the per-name slow-down would.
 */
export const TWO_FACTOR_USER_THROTTLE: ThrottleRule = LOGIN_THROTTLE;

/** Forgotten-password mails, per (client address, e-mail): 5 requests, then the sign-in back-off (reference §2.2). */
export const FORGOT_PASSWORD_THROTTLE: ThrottleRule = { ...LOGIN_THROTTLE, maxFailures: 5 };
/** Forgotten-password requests per client address across e-mails: 20 an hour, then the back-off. */
export const FORGOT_PASSWORD_ADDRESS: ThrottleRule = { ...LOGIN_THROTTLE, maxFailures: 20 };
/** Reset mails one mailbox receives, whoever asks: 10 an hour; more requests are answered alike and send nothing. */
export const FORGOT_PASSWORD_MAILBOX: ThrottleRule = { maxFailures: 10, windowSeconds: HOUR, firstBlockSeconds: 0, factor: 1, maxBlockSeconds: 0 };

/** Rows untouched this long (and not blocked) are deleted: every rule has drained long before. */
const SWEEP_AFTER_MS = 24 * 3600 * 1000;
const SWEEP_EVERY_MS = 10 * 60 * 1000;

export type Bucket = { failures: number; blocks: number; blockedUntil: Date | null; updatedAt: Date };

export function blockSeconds(rule: ThrottleRule, blockNumber: number): number {
  return Math.min(rule.firstBlockSeconds * rule.factor ** Math.max(0, blockNumber - 1), rule.maxBlockSeconds);
}

const blocksAt = (rule: ThrottleRule) => rule.maxBlockSeconds > 0;

/** The bucket as it stands at `now`: failures leak out at maxFailures per window; an empty bucket forgets its blocks. */
export function drain(bucket: Bucket | undefined, rule: Pick<ThrottleRule, 'maxFailures' | 'windowSeconds'>, now: Date): Bucket {
  const still = bucket?.blockedUntil && bucket.blockedUntil > now ? bucket.blockedUntil : null;
  if (!bucket) return { failures: 0, blocks: 0, blockedUntil: null, updatedAt: now };
  const perFailureMs = (rule.windowSeconds * 1000) / rule.maxFailures;
  const leaked = Math.floor(Math.max(0, now.getTime() - bucket.updatedAt.getTime()) / perFailureMs);
  if (leaked >= bucket.failures) return { failures: 0, blocks: still ? bucket.blocks : 0, blockedUntil: still, updatedAt: now };
  return {
    failures: bucket.failures - leaked,
    blocks: bucket.blocks,
    blockedUntil: still,
    // The part of a failure not yet leaked is kept for the next look.
    updatedAt: new Date(bucket.updatedAt.getTime() + leaked * perFailureMs),
  };
}

/** One more failure: the one that fills the bucket (and, while it is full, every further one) blocks, each block longer. */
export function afterFailure(bucket: Bucket | undefined, rule: ThrottleRule, now: Date): Bucket {
  const d = drain(bucket, rule, now);
  const failures = Math.min(d.failures + 1, rule.maxFailures);
  if (!blocksAt(rule) || d.failures + 1 < rule.maxFailures) return { ...d, failures };
  const blocks = d.blocks + 1;
  return { failures, blocks, blockedUntil: new Date(now.getTime() + blockSeconds(rule, blocks) * 1000), updatedAt: d.updatedAt };
}

/** The wait before an attempt on a name with `failures` recent failures: none for the first ones, then doubling, bounded. */
export function slowdownMs(rule: SlowdownRule, failures: number): number {
  if (failures < rule.freeFailures) return 0;
  return Math.min(rule.firstDelayMs * 2 ** (failures - rule.freeFailures), rule.maxDelayMs);
}

/** The bucket rule of a slow-down: it counts a few failures past the point where the wait is longest. */
export function slowdownBucket(rule: SlowdownRule): ThrottleRule {
  const steps = Math.ceil(Math.log2(rule.maxDelayMs / rule.firstDelayMs)) + 1;
  return { maxFailures: rule.freeFailures + steps, windowSeconds: rule.windowSeconds, firstBlockSeconds: 0, factor: 1, maxBlockSeconds: 0 };
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

type BucketRow = typeof schema.loginThrottle.$inferSelect;

/** The stored buckets of these keys, in one read (a sign-in looks at three). */
async function readBuckets(db: Db, keys: string[]): Promise<Map<string, BucketRow>> {
  const t = schema.loginThrottle;
  const rows = await db.select().from(t).where(keys.length === 1 ? eq(t.key, keys[0]!) : inArray(t.key, keys));
  return new Map(rows.map((r) => [r.key, r]));
}

/** Buckets kept in the database (one row per key), so limits hold across restarts and processes. */
export function createThrottle(db: Db, rule: ThrottleRule, code?: string) {
  const t = schema.loginThrottle;
  const get = async (key: string) => (await readBuckets(db, [key])).get(key);
  let lastSweep = 0;
  const self = {
    /** Throws 429 while this bucket (as read) is blocked. */
    refuseIfBlocked(bucket: BucketRow | undefined, now: Date) {
      if (bucket?.blockedUntil && bucket.blockedUntil > now) throw tooManyAttempts(bucket.blockedUntil, code);
    },
    /** Throws 429 while the key is blocked. */
    async check(key: string, now = new Date()) {
      self.refuseIfBlocked(await get(key), now);
    },
    /** Failures this bucket (as read) holds now (drained). */
    levelOf(bucket: BucketRow | undefined, now: Date) {
      return drain(bucket, rule, now).failures;
    },
    /**
     * Counts one request unless the key is blocked, in one locked step (parallel requests cannot all
     * pass a check before any is counted): `refused` is the end of the block, `before` the count found.
     */
    async count(key: string, now = new Date()): Promise<{ refused: Date | null; before: number }> {
      const counted = await db.transaction(async (tx) => {
        await tx.insert(t).values({ key, updatedAt: now }).onConflictDoNothing();
        const [stored] = await tx.select().from(t).where(eq(t.key, key)).for('update');
        if (stored?.blockedUntil && stored.blockedUntil > now) return { refused: stored.blockedUntil, before: stored.failures };
        const bucket = stored && stored.failures + stored.blocks > 0 ? stored : undefined;
        const before = drain(bucket, rule, now).failures;
        await tx.update(t).set(afterFailure(bucket, rule, now)).where(eq(t.key, key));
        return { refused: null, before };
      });
      if (now.getTime() - lastSweep > SWEEP_EVERY_MS) {
        lastSweep = now.getTime();
        await self.sweep(now);
      }
      return counted;
    },
    async reset(key: string) {
      await db.delete(t).where(eq(t.key, key));
    },
    /** Deletes the rows of keys quiet for a day, so the table does not grow with every address and name ever tried. */
    async sweep(now = new Date()) {
      await db
        .delete(t)
        .where(and(lt(t.updatedAt, new Date(now.getTime() - SWEEP_AFTER_MS)), or(isNull(t.blockedUntil), lt(t.blockedUntil, now))));
    },
  };
  return self;
}
export type Throttle = ReturnType<typeof createThrottle>;

/** The sign-in name as limits see it: the same person whatever the case, spacing or category asked for. */
export const normalName = (name: string) => name.normalize('NFKC').trim().toLowerCase();

/** A name inside a key: normalised, and escaped so no character of it (a separator, NUL) reaches the database raw. */
const keyPart = (name: string) => encodeURIComponent(normalName(name));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sign-in limits: per (address, name) the reference's back-off; per address across names a wider
 * one; per name from anywhere only a bounded wait, so nobody can lock the owner out.
 */
export function createLoginLimits(db: Db, opts: { addressFailuresPerHour: number; slowdown?: SlowdownRule }) {
  const pair = createThrottle(db, LOGIN_THROTTLE);
  const address = createThrottle(db, loginAddressRule(opts.addressFailuresPerHour));
  const slowdown = opts.slowdown ?? LOGIN_ACCOUNT_SLOWDOWN;
  const account = createThrottle(db, slowdownBucket(slowdown));
  const keys = (ip: string, name: string) => {
    const n = keyPart(name);
    const a = clientKey(ip);
    return { pair: `login|${a}|${n}`, address: `login-address|${a}`, account: `login-account|${n}` };
  };
  /**
   * Attempts under way per (address, name) and per address, so a burst of parallel requests cannot
   * all be checked before the first failure is counted. An entry lives only while its requests run.
   */
  const inFlight = new Map<string, number>();
  const hold = (key: string, level: number, max: number) => {
    const running = inFlight.get(key) ?? 0;
    return running > 0 && running + level >= max;
  };
  const take = (delta: number, ...list: string[]) => {
    for (const key of list) {
      const n = (inFlight.get(key) ?? 0) + delta;
      if (n > 0) inFlight.set(key, n);
      else inFlight.delete(key);
    }
  };
  return {
    keys,
    /**
     * One password attempt: 429 while the address or the (address, name) is blocked, or while
     * attempts already under way would reach its limit; then the name's wait; then `verify`.
     * A failure counts for the pair, the address and the name; the right password clears its own
     * (address, name) only — the address and the name keep what others did.
     */
    async attempt(ip: string, name: string, verify: () => Promise<boolean>): Promise<boolean> {
      const k = keys(ip, name);
      // The three buckets in one read: a class signing in at once makes one statement each, not five.
      const now = new Date();
      const stored = await readBuckets(db, [k.address, k.pair, k.account]);
      address.refuseIfBlocked(stored.get(k.address), now);
      pair.refuseIfBlocked(stored.get(k.pair), now);
      const [pairLevel, addressLevel, accountLevel] = [pair.levelOf(stored.get(k.pair), now), address.levelOf(stored.get(k.address), now), account.levelOf(stored.get(k.account), now)];
      if (hold(k.pair, pairLevel, LOGIN_THROTTLE.maxFailures) || hold(k.address, addressLevel, opts.addressFailuresPerHour)) {
        throw tooManyAttempts(new Date(Date.now() + 1000));
      }
      take(1, k.pair, k.address);
      try {
        const wait = slowdownMs(slowdown, accountLevel);
        if (wait > 0) await sleep(wait);
        const ok = await verify();
        if (ok) await pair.reset(k.pair);
        else {
          await pair.count(k.pair);
          await address.count(k.address);
          await account.count(k.account);
        }
        return ok;
      } finally {
        take(-1, k.pair, k.address);
      }
    },
    /** Attempts under way (tests: the map holds only running requests). */
    get inFlight() {
      return inFlight.size;
    },
  };
}
export type LoginLimits = ReturnType<typeof createLoginLimits>;

/** Forgotten-password requests: per (address, e-mail) and per address they back off; per mailbox mails are capped. */
export function createForgotPasswordLimits(db: Db) {
  const pair = createThrottle(db, FORGOT_PASSWORD_THROTTLE);
  const address = createThrottle(db, FORGOT_PASSWORD_ADDRESS);
  const mailbox = createThrottle(db, FORGOT_PASSWORD_MAILBOX);
  return {
    /** Throws 429 when the caller asked too often; answers whether a mail may go to that mailbox. */
    async request(ip: string, email: string): Promise<boolean> {
      const e = keyPart(email);
      const a = clientKey(ip);
      const k = { pair: `forgot|${a}|${e}`, address: `forgot-address|${a}`, mailbox: `forgot-mailbox|${e}` };
      for (const [throttle, key] of [[address, k.address], [pair, k.pair]] as const) {
        const { refused } = await throttle.count(key);
        if (refused) throw tooManyAttempts(refused);
      }
      return (await mailbox.count(k.mailbox)).before < FORGOT_PASSWORD_MAILBOX.maxFailures;
    },
  };
}
export type ForgotPasswordLimits = ReturnType<typeof createForgotPasswordLimits>;

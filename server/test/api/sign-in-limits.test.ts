import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/db';
import { createThrottle, LOGIN_THROTTLE } from '../../src/auth/throttle';
import { DEMO_PASSWORD, login, startTestServer, type TestServer } from '../helpers/server';
import { startMailSink } from '../helpers/mail-sink';

const from = (address: string) => ({ 'x-forwarded-for': address });
const statuses = async (n: number, attempt: (i: number) => Promise<{ res: Response }>) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await attempt(i)).res.status);
  return out;
};
/** Each case makes tens of sign-ins (a password hash each): generous on a loaded machine. */
const SLOW = 120_000;
const repeat = <T>(n: number, v: T) => Array.from({ length: n }, () => v);

describe('behind a trusted proxy (TRUST_PROXY=127.0.0.1)', () => {
  let server: TestServer;
  let sink: Awaited<ReturnType<typeof startMailSink>>;
  beforeAll(async () => {
    sink = await startMailSink();
    server = await startTestServer({ env: { TRUST_PROXY: '127.0.0.1', SMTP_HOST: '127.0.0.1', SMTP_PORT: String(sink.port), PUBLIC_URL: 'http://portal.test' } });
  });
  afterAll(async () => {
    await server?.close();
    await sink?.close();
  }, SLOW);

  it('ten wrong passwords for admin from one address do not stop admin signing in from another', async () => {
    expect(await statuses(10, () => login(server, 'admin', 'wrong', 'default', from('203.0.113.1')))).toEqual(repeat(10, 401));
    const blocked = await login(server, 'admin', DEMO_PASSWORD, 'default', from('203.0.113.1'));
    expect(blocked.res.status).toBe(429);
    const body = await blocked.res.json();
    expect(body.description_code).toBe('login_too_many_attempts');
    expect(body.params.retry_after).toBeDefined();
    expect(blocked.res.headers.get('retry-after')).toBeTruthy();
    expect((await login(server, 'admin', DEMO_PASSWORD, 'default', from('203.0.113.2'))).res.status).toBe(200);
  }, SLOW);

  it('counts an IPv6 client by its /64', async () => {
    expect(await statuses(10, (i) => login(server, 'user', 'wrong', 'default', from(`2001:db8:1:2::${i + 1}`)))).toEqual(repeat(10, 401));
    expect((await login(server, 'user', DEMO_PASSWORD, 'default', from('2001:db8:1:2:ffff::99'))).res.status).toBe(429);
    expect((await login(server, 'user', DEMO_PASSWORD, 'default', from('2001:db8:1:3::1'))).res.status).toBe(200);
  }, SLOW);

  it('leaving out category_id (or changing case) gives no second allowance', async () => {
    const c = from('203.0.113.3');
    expect(await statuses(10, () => login(server, 'student01', 'wrong', 'default', c))).toEqual(repeat(10, 401));
    expect((await login(server, 'student01', 'wrong', null, c)).res.status).toBe(429);
    expect((await login(server, 'student01', DEMO_PASSWORD, null, c)).res.status).toBe(429);
    expect((await login(server, 'Student01', DEMO_PASSWORD, 'default', c)).res.status).toBe(429);
    expect((await login(server, 'student01', DEMO_PASSWORD, 'lab', c)).res.status).toBe(429);
  }, SLOW);

  it('one address trying one password on many user names gets 429 after 30 failures', async () => {
    const d = from('203.0.113.4');
    const names = Array.from({ length: 30 }, (_, i) => `someone-${i}`);
    expect(await statuses(30, (i) => login(server, names[i]!, 'Summer2026!', 'default', d))).toEqual(repeat(30, 401));
    const next = await login(server, 'student02', DEMO_PASSWORD, 'default', d);
    expect(next.res.status).toBe(429);
    expect((await next.res.json()).description_code).toBe('login_too_many_attempts');
    // Another address is not held back.
    expect((await login(server, 'student02', DEMO_PASSWORD, 'default', from('203.0.113.5'))).res.status).toBe(200);
  }, SLOW);

  it('a burst of parallel attempts cannot all be checked before the first failure counts', async () => {
    const burst = async (n: number, name: (i: number) => string, address: string) =>
      (await Promise.all(Array.from({ length: n }, (_, i) => login(server, name(i), 'wrong', 'default', from(address))))).map((r) => r.res.status);
    const onOneName = await burst(40, () => 'advanced', '203.0.113.7');
    expect(onOneName.filter((c) => c === 401).length).toBeGreaterThanOrEqual(1);
    expect(onOneName.filter((c) => c === 401).length).toBeLessThanOrEqual(12);
    expect(onOneName.filter((c) => c !== 401 && c !== 429)).toEqual([]);
    const onManyNames = await burst(80, (i) => `burst-${i}`, '203.0.113.8');
    expect(onManyNames.filter((c) => c === 401).length).toBeLessThanOrEqual(33);
    expect(onManyNames.filter((c) => c !== 401 && c !== 429)).toEqual([]);
    // Nothing is left held once the requests have ended.
    expect(server.ctx.loginThrottle.inFlight).toBe(0);
  }, SLOW);

  it('failures from many addresses only slow an account down: the right password still signs in', async () => {
    // 12 failures on manager, each from another address (no pair and no address reaches its limit).
    expect(await statuses(12, (i) => login(server, 'manager', 'wrong', 'default', from(`198.51.100.${i + 1}`)))).toEqual(repeat(12, 401));
    const started = Date.now();
    expect((await login(server, 'manager', DEMO_PASSWORD, 'default', from('198.51.100.200'))).res.status).toBe(200);
    // 12 failures in the hour: every attempt on the name waits (2 s now, at least 1 s on a slow machine), bounded by 8 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  }, SLOW);

  it('a successful sign-in of its own account does not clear the address limit', async () => {
    const e = from('203.0.113.6');
    expect(await statuses(20, (i) => login(server, `guess-${i}`, 'x', 'default', e))).toEqual(repeat(20, 401));
    expect((await login(server, 'student03', DEMO_PASSWORD, 'default', e)).res.status).toBe(200);
    expect(await statuses(10, (i) => login(server, `guess-b-${i}`, 'x', 'default', e))).toEqual(repeat(10, 401));
    expect((await login(server, 'student03', DEMO_PASSWORD, 'default', e)).res.status).toBe(429);
  }, SLOW);

  it('forgotten-password requests from one address do not stop the owner asking from another', async () => {
    const forgot = (address: string, email = 'student04@example.org', category = 'default') =>
      fetch(`${server.url}/authentication/forgot-password`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...from(address) },
        body: JSON.stringify({ category_id: category, email }),
      });
    for (let i = 0; i < 5; i++) expect((await forgot('192.0.2.1')).status).toBe(200);
    const blocked = await forgot('192.0.2.1');
    expect(blocked.status).toBe(429);
    expect((await blocked.json()).params.retry_after).toBeDefined();
    // Another category, the same mailbox: no second allowance.
    expect((await forgot('192.0.2.1', 'STUDENT04@example.org', 'lab')).status).toBe(429);
    expect((await forgot('192.0.2.2')).status).toBe(200);
    // One address asking for many mailboxes backs off too (20 an hour).
    const many = [];
    for (let i = 0; i < 21; i++) many.push((await forgot('192.0.2.3', `nobody-${i}@example.org`)).status);
    expect(many).toEqual([...repeat(20, 200), 429]);
  }, SLOW);

  it('sweeps the rows of keys quiet for a day, keeping those still blocked', async () => {
    const t = schema.loginThrottle;
    const rows = await server.ctx.db.select().from(t);
    expect(rows.length).toBeGreaterThan(2);
    const old = new Date(Date.now() - 25 * 3600 * 1000);
    await server.ctx.db.update(t).set({ updatedAt: old });
    const blocked = rows.filter((r) => r.blockedUntil && r.blockedUntil > new Date()).map((r) => r.key);
    expect(blocked.length).toBeGreaterThan(0);
    await createThrottle(server.ctx.db, LOGIN_THROTTLE).sweep();
    expect((await server.ctx.db.select().from(t)).map((r) => r.key).sort()).toEqual(blocked.sort());
  });
});

describe('without TRUST_PROXY', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { DIRECT_VIEWER_DELAY_MS: '0' } });
  });
  afterAll(async () => server?.close());

  it('ignores X-Forwarded-For: the address is the peer', async () => {
    const results = await statuses(10, (i) => login(server, 'advanced', 'wrong', 'default', from(`203.0.113.${i + 10}`)));
    expect(results).toEqual(repeat(10, 401));
    expect((await login(server, 'advanced', DEMO_PASSWORD, 'default', from('203.0.113.50'))).res.status).toBe(429);
  }, SLOW);

  it('the direct-link limit is not bypassed with X-Forwarded-For', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 31; i++) {
      const res = await fetch(`${server.url}/api/v3/direct/${'x'.repeat(43)}`, { headers: from(`198.51.100.${i + 1}`) });
      codes.push(res.status);
      if (res.status === 429) {
        const body = await res.json();
        expect(body.description_code).toBe('too_many_requests');
        expect(body.params.retry_after).toBeDefined();
      }
    }
    expect(codes).toEqual([...repeat(30, 404), 429]);
  }, SLOW);
});

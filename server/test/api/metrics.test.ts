// GET /metrics (issue 29, monitoring): the Prometheus text format, guarded by METRICS_TOKEN or
// METRICS_ALLOW (off when neither is set); what a start and HTTP answers add; the request id that
// an error answer, its X-Request-Id header and the log share.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrapeAllowed } from '../../src/modules/metrics/routes';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';
import { scaled } from '../helpers/slowdown';
import { until } from '../helpers/wait';

const TOKEN = 'monitoring-token-for-the-test-0123';
let server: TestServer;
let user: string;
const logged: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1, env: { METRICS_TOKEN: TOKEN, LOG_LEVEL: 'info' } });
  const stream = (server.ctx.log as unknown as Record<symbol, { write: (s: string) => unknown }>)[pino.symbols.streamSym]!;
  stream.write = (line: string) => logged.push(line);
  user = await loginToken(server, 'user');
}, scaled(120_000));
afterAll(async () => server?.close());

const scrape = (authorization?: string) => fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });
/** The value of one series (`name{labels}` as printed, labels in any order given as a fragment). */
const valueOf = (text: string, name: string, labels: string[] = []) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => labels.every((x) => l.includes(x)))
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));

describe('who may scrape', () => {
  it('refuses without the token or with another (401 with a code), answers with it', async () => {
    for (const auth of [undefined, 'Bearer wrong-token-wrong-token-0000', `Bearer ${user}`]) {
      const res = await scrape(auth);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { description_code: string }).description_code).toBe('unauthorized');
    }
    const ok = await scrape(`Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('is off without a token or addresses, and lets allowed addresses in without a token', () => {
    const req = (ip: string, authorization?: string) => ({ ip, headers: authorization ? { authorization } : {} });
    expect(scrapeAllowed({ token: null, allow: [] }, req('127.0.0.1'))).toBe('off');
    expect(scrapeAllowed({ token: null, allow: ['10.1.0.0/16', '192.0.2.7'] }, req('10.1.4.5'))).toBe('ok');
    expect(scrapeAllowed({ token: null, allow: ['10.1.0.0/16', '192.0.2.7'] }, req('::ffff:192.0.2.7'))).toBe('ok');
    expect(scrapeAllowed({ token: null, allow: ['10.1.0.0/16'] }, req('10.2.0.1'))).toBe('refused');
    expect(scrapeAllowed({ token: TOKEN, allow: ['10.1.0.0/16'] }, req('10.2.0.1', `Bearer ${TOKEN}`))).toBe('ok');
    expect(scrapeAllowed({ token: TOKEN, allow: [] }, req('127.0.0.1', `Bearer ${TOKEN}x`))).toBe('refused');
  });
});

describe('what it says', () => {
  it('counts a start by its hypervisor, the desktops by state, the answers by route pattern, and the database pool', async () => {
    const desktops = (await (await call(server, '/api/v3/user/desktops', { token: user })).json()) as { id: string; name: string; state: string }[];
    const d = desktops.find((x) => x.name === 'Demo desktop')!;
    expect((await call(server, `/api/v3/desktop/start/${d.id}`, { token: user })).status).toBe(200);
    await until('started', async () => ((await (await call(server, '/api/v3/user/desktops', { token: user })).json()) as typeof desktops).find((x) => x.id === d.id)?.state === 'Started', scaled(90_000));
    const text = await (await scrape(`Bearer ${TOKEN}`)).text();
    expect(valueOf(text, 'vdi_desktop_start_duration_seconds_count', ['hypervisor="local"', 'outcome="started"'])).toEqual([1]);
    expect(valueOf(text, 'vdi_desktops', ['state="Started"'])[0]).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'vdi_hypervisor_up', ['hypervisor="local"'])).toEqual([1]);
    expect(valueOf(text, 'vdi_hypervisor_desktops_running', ['hypervisor="local"'])[0]).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'vdi_start_queue_waiting').every((n) => n === 0)).toBe(true);
    expect(valueOf(text, 'vdi_database_connections', ['state="max"'])[0]).toBeGreaterThan(0);
    expect(text).toContain('vdi_viewer_connections ');
    expect(text).toContain('vdi_bookings_active ');
    expect(text).toContain('vdi_process_process_resident_memory_bytes');
    // The route's pattern, never a desktop's id.
    expect(valueOf(text, 'vdi_http_request_duration_seconds_count', ['route="/api/v3/desktop/:action/:id"', 'status="200"'])).toEqual([1]);
    expect(text).not.toContain(d.id);
    // Every series names this process.
    expect(text).toMatch(new RegExp(`vdi_desktops\\{[^}]*server="${server.config.serverId}"`));
    await call(server, `/api/v3/desktop/stop/${d.id}`, { token: user });
  }, scaled(120_000));
});

describe('the request id', () => {
  it('is in an error answer, its X-Request-Id header and the log lines of that request', async () => {
    const res = await call(server, '/api/v3/desktop/start/no-such-desktop', { token: user });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const body = (await res.json()) as { request_id?: string };
    expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-request-id')).toBe(body.request_id);
    const lines = logged.filter((l) => l.includes(body.request_id!)).map((l) => JSON.parse(l) as { reqId: string; msg: string });
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });
});

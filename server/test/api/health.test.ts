// The health route a load balancer checks (deploy/haproxy/haproxy.cfg) and the process's name on every answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../helpers/server';

describe('GET /api/v3/health', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { SERVER_ID: 'p7' } });
  });
  afterAll(async () => server?.close());

  it('answers 200 with the process named, and X-Server-Id on every answer (a 404 too)', async () => {
    const res = await call(server, '/api/v3/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-server-id')).toBe('p7');
    expect(await res.json()).toEqual({ status: 'ok', server: 'p7' });
    expect((await call(server, '/api/v3/no-such-route')).headers.get('x-server-id')).toBe('p7');
  });

  it('answers 503 server_stopping once the stop drains it, while the other routes still serve', async () => {
    const drained = server.app.drain(50);
    const res = await call(server, '/api/v3/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'service_unavailable', description_code: 'server_stopping' });
    expect((await call(server, '/api/v3/categories')).status).toBe(200);
    await drained;
  });
});

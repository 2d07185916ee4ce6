import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZDisclaimer, ZMessageTemplate } from '@vdi/contracts';
import { schema } from '../../src/db';
import { call, loginToken, startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('GET /message-template/{name}', () => {
  it('answers the dialog texts in the asked language, else the user’s', async () => {
    const token = await loginToken(server, 'user');
    const es = ZMessageTemplate.parse(await (await call(server, '/api/v3/message-template/booking-end?lang=es-ES', { token })).json());
    expect(es).toMatchObject({ name: 'booking-end', lang: 'es' });
    expect(es.body).toContain('{{minutes}}');
    const en = ZMessageTemplate.parse(await (await call(server, '/api/v3/message-template/plan-end', { token })).json());
    expect(en.lang).toBe('en');
  });

  it('answers 404 for a name it does not know, and 401 without a session', async () => {
    const token = await loginToken(server, 'user');
    const res = await call(server, '/api/v3/message-template/no-such-thing', { token });
    expect(res.status).toBe(404);
    expect((await res.json()).description_code).toBe('not_found');
    expect((await call(server, '/api/v3/message-template/booking-end')).status).toBe(401);
  });
});

describe('GET /disclaimer', () => {
  it('answers the text in the asked language, else the one for every language', async () => {
    await server.ctx.settings.set('disclaimer', {
      enabled: true, title: 'Notice', body: 'Read me', texts: { ca: { title: 'Avís', body: 'Llegiu-me' } },
    });
    expect(ZDisclaimer.parse(await (await call(server, '/api/v3/disclaimer?lang=ca')).json())).toEqual({ title: 'Avís', body: 'Llegiu-me' });
    expect(ZDisclaimer.parse(await (await call(server, '/api/v3/disclaimer?lang=fr')).json())).toEqual({ title: 'Notice', body: 'Read me' });
    await server.ctx.settings.set('disclaimer', { enabled: true, title: 'One', body: 'For all', texts: {} });
    expect(ZDisclaimer.parse(await (await call(server, '/api/v3/disclaimer?lang=ca')).json())).toEqual({ title: 'One', body: 'For all' });
  });
});

import { scaled } from '../helpers/slowdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';
import { routeKey } from '../helpers/routes-fixtures';
import { casesRun, CALLERS, LIST_CALLERS, listLeaks, MATRIX, MATRIX_ENV, matrixOrder, prepareMatrix, runCase } from '../helpers/authorization-matrix';

// The authorisation matrix (issue 9) against one in-process server: the table, its fixtures and its
// checks are in helpers/authorization-matrix.ts (the same run goes through the load balancer in
// server/test/processes/matrix-balancer.test.ts).

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ startConcurrency: 1, env: MATRIX_ENV });
  await prepareMatrix(server);
}, scaled(240_000));
afterAll(async () => server?.close());

describe('the table covers the app', () => {
  it('has a case for every registered route (a new route must get its row here)', () => {
    const registered = new Set(server.app.registeredRoutes.map(routeKey));
    const missing = [...registered].filter((k) => !(k in MATRIX));
    const stale = Object.keys(MATRIX).filter((k) => !registered.has(k));
    expect({ missing, stale }).toEqual({ missing: [], stale: [] });
  });
});

describe('lists never show another category’s objects', () => {
  it.each(LIST_CALLERS)('%s', async (caller) => {
    expect((await listLeaks(caller)).join('\n')).toBe('');
  });
});

describe('route × caller', () => {
  it.each(matrixOrder())('%s', async (key) => runCase(key), scaled(60_000));
  it('counted its cases', () => {
    expect(casesRun()).toBeGreaterThanOrEqual(Object.keys(MATRIX).length * CALLERS.length);
    console.log(`authorisation matrix: ${Object.keys(MATRIX).length} routes, ${casesRun()} route×caller cases`);
  });
});

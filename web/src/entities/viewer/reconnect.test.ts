import { describe, expect, it } from 'vitest';
import { HttpError } from '../../lib/api';
import { isDropped, reconnectDelay, renewMayPass, renewWithin } from './reconnect';

const httpError = (status: number) => new HttpError(status, { error: 'x', msg: '', description_code: 'viewer_not_started', description: '', params: null }, new Headers());

describe('a viewer reconnecting by itself', () => {
  it('reconnects through drops (gone without a close frame, server stopping or failing), not through the display ending or the bridge saying why', () => {
    for (const code of [1006, 1001, 1011, 1012, 1013, 1014]) expect(isDropped(code)).toBe(true);
    for (const code of [1000, 1005, 4502, 4504]) expect(isDropped(code)).toBe(false);
  });

  it('tries at once, then backs off from 250 ms to 2 s', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map(reconnectDelay)).toEqual([0, 250, 500, 1000, 2000, 2000, 2000]);
  });

  it('asks again while no process answers, stops at an answer that refuses (the desktop stopped)', async () => {
    expect(renewMayPass(httpError(502))).toBe(true);
    expect(renewMayPass(new TypeError('Failed to fetch'))).toBe(true);
    expect(renewMayPass(httpError(409))).toBe(false);
    expect(renewMayPass(httpError(401))).toBe(false);

    let asked = 0;
    const ticket = await renewWithin(async () => {
      if (++asked < 3) throw httpError(503);
      return 'ticket';
    }, { boundMs: 5_000 });
    expect([ticket, asked]).toEqual(['ticket', 3]);

    asked = 0;
    await expect(renewWithin(async () => {
      asked++;
      throw httpError(409);
    }, { boundMs: 5_000 })).rejects.toMatchObject({ status: 409 });
    expect(asked).toBe(1);
  });

  it('gives up with the last failure once the bound is spent, and stops when aborted', async () => {
    const started = Date.now();
    await expect(renewWithin(async () => {
      throw httpError(503);
    }, { boundMs: 600 })).rejects.toMatchObject({ status: 503 });
    expect(Date.now() - started).toBeLessThan(3_000);

    const aborted = new AbortController();
    const pending = renewWithin(async () => {
      aborted.abort(new Error('page left'));
      throw httpError(503);
    }, { boundMs: 5_000, signal: aborted.signal });
    await expect(pending).rejects.toThrow('page left');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io, type Socket } from 'socket.io-client';
import { loginToken, startTestServer, userIdOf, type TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const connect = (jwt: string): Socket =>
  io(`${server.url}/userspace`, { path: '/api/v3/socket.io', transports: ['websocket'], auth: { jwt }, reconnection: false });

const connected = (s: Socket) =>
  new Promise<void>((resolve, reject) => {
    s.on('connect', () => resolve());
    s.on('connect_error', (e) => reject(e));
  });

describe('live socket /userspace', () => {
  it('refuses a connection without a valid session token', async () => {
    const s = connect('not-a-token');
    await expect(connected(s)).rejects.toThrow('Connection rejected by server');
    s.close();
  });

  it('delivers events to exactly the user they are for, as JSON strings', async () => {
    const [uma, sara] = [await loginToken(server, 'user'), await loginToken(server, 'student01')];
    const a = connect(uma);
    const b = connect(sara);
    await Promise.all([connected(a), connected(b)]);
    const got: string[] = [];
    b.on('msg', (p: string) => got.push(p));
    const received = new Promise<string>((resolve) => a.on('msg', resolve));
    server.ctx.bus.toUser(await userIdOf(server, 'user'), 'msg', { type: 'info', msg_code: 'hello' });
    expect(JSON.parse(await received)).toEqual({ type: 'info', msg_code: 'hello' });
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual([]);
    a.close();
    b.close();
  });

  it('disconnects the sockets of a session that ends', async () => {
    const token = await loginToken(server, 'advanced');
    const s = connect(token);
    await connected(s);
    const gone = new Promise<string>((resolve) => s.on('disconnect', resolve));
    const logout = new Promise<string>((resolve) => s.on('logout', resolve));
    await fetch(`${server.url}/authentication/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(JSON.parse(await logout)).toEqual({ reason: 'session_ended' });
    expect(await gone).toBe('io server disconnect');
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QmpClient, QmpConnectionError, QmpError, type QmpEvent } from './qmp';

const GREETING = { QMP: { version: { qemu: { major: 7, minor: 2, micro: 22 }, package: 'Debian' }, capabilities: ['oob'] } };

type Handler = (cmd: { execute: string; arguments?: Record<string, unknown>; id?: unknown }, sock: Socket) => void;

/** A fake QMP server: greets, enforces qmp_capabilities first, and lets each test answer commands. */
function fakeQmp(path: string, handler: Handler): Promise<{ server: Server; clients: Socket[]; received: string[] }> {
  const clients: Socket[] = [];
  const received: string[] = [];
  const server = createServer((sock) => {
    clients.push(sock);
    let negotiated = false;
    let buf = '';
    sock.write(JSON.stringify(GREETING) + '\r\n');
    sock.on('data', (d) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const cmd = JSON.parse(buf.slice(0, nl)) as Parameters<Handler>[0];
        buf = buf.slice(nl + 1);
        received.push(cmd.execute);
        if (cmd.execute === 'qmp_capabilities') {
          negotiated = true;
          sock.write(JSON.stringify({ return: {}, id: cmd.id }) + '\r\n');
        } else if (!negotiated) {
          sock.write(JSON.stringify({ error: { class: 'CommandNotFound', desc: 'Expecting capabilities negotiation with \'qmp_capabilities\'' }, id: cmd.id }) + '\r\n');
        } else {
          handler(cmd, sock);
        }
      }
    });
  });
  return new Promise((resolve) => server.listen(path, () => resolve({ server, clients, received })));
}

const reply = (sock: Socket, obj: unknown) => sock.write(JSON.stringify(obj) + '\r\n');

describe('QmpClient', () => {
  let dir: string;
  let sockPath: string;
  let server: Server | undefined;
  let client: QmpClient | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qmp-test-'));
    sockPath = join(dir, 'qmp.sock');
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the greeting and negotiates capabilities before any command', async () => {
    const fake = await fakeQmp(sockPath, (cmd, sock) => reply(sock, { return: { status: 'running', running: true }, id: cmd.id }));
    server = fake.server;
    client = await QmpClient.connect(sockPath);
    expect(client.greeting.version.qemu.major).toBe(7);
    const status = await client.execute('query-status');
    expect(status).toEqual({ status: 'running', running: true });
    expect(fake.received).toEqual(['qmp_capabilities', 'query-status']);
  });

  it('matches replies by id even when they come back out of order', async () => {
    const held: { id: unknown; sock: Socket; execute: string }[] = [];
    const fake = await fakeQmp(sockPath, (cmd, sock) => {
      held.push({ id: cmd.id, sock, execute: cmd.execute });
      if (held.length === 3) for (const h of held.reverse()) reply(h.sock, { return: { name: h.execute }, id: h.id });
    });
    server = fake.server;
    client = await QmpClient.connect(sockPath);
    const results = await Promise.all(['a', 'b', 'c'].map((n) => client!.execute(`cmd-${n}`)));
    expect(results).toEqual([{ name: 'cmd-a' }, { name: 'cmd-b' }, { name: 'cmd-c' }]);
  });

  it('maps QMP errors to QmpError with class and desc', async () => {
    server = (await fakeQmp(sockPath, (cmd, sock) =>
      reply(sock, { error: { class: 'CommandNotFound', desc: "The command nope has not been found" }, id: cmd.id }),
    )).server;
    client = await QmpClient.connect(sockPath);
    const err = await client.execute('nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QmpError);
    expect(err).toMatchObject({ errorClass: 'CommandNotFound', desc: 'The command nope has not been found', command: 'nope' });
  });

  it('emits events by name and under "event", interleaved with replies', async () => {
    server = (await fakeQmp(sockPath, (cmd, sock) => {
      reply(sock, { event: 'POWERDOWN', data: {}, timestamp: { seconds: 1, microseconds: 2 } });
      reply(sock, { return: {}, id: cmd.id });
      reply(sock, { event: 'SHUTDOWN', data: { guest: true, reason: 'guest-shutdown' }, timestamp: { seconds: 3, microseconds: 4 } });
    })).server;
    client = await QmpClient.connect(sockPath);
    const all: string[] = [];
    client.events.on('event', (e) => all.push(e.event));
    const shutdown = new Promise<QmpEvent>((r) => client!.events.once('SHUTDOWN', r));
    await client.execute('system_powerdown');
    const ev = await shutdown;
    expect(ev.data).toEqual({ guest: true, reason: 'guest-shutdown' });
    expect(all).toEqual(['POWERDOWN', 'SHUTDOWN']);
  });

  it('handles lines split across chunks', async () => {
    server = (await fakeQmp(sockPath, (cmd, sock) => {
      const line = JSON.stringify({ return: { ok: 1 }, id: cmd.id }) + '\r\n';
      sock.write(line.slice(0, 5));
      setTimeout(() => sock.write(line.slice(5)), 20);
    })).server;
    client = await QmpClient.connect(sockPath);
    expect(await client.execute('x')).toEqual({ ok: 1 });
  });

  it('retries while the socket does not exist yet', async () => {
    const connecting = QmpClient.connect(sockPath, { timeoutMs: 3000 });
    await new Promise((r) => setTimeout(r, 300));
    server = (await fakeQmp(sockPath, () => {})).server;
    client = await connecting;
    expect(client.closed).toBe(false);
  });

  it('gives up after the connect timeout', async () => {
    const err = await QmpClient.connect(sockPath, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QmpConnectionError);
  });

  it('fails pending commands and emits close when the peer goes away', async () => {
    const fake = await fakeQmp(sockPath, () => {});
    server = fake.server;
    client = await QmpClient.connect(sockPath);
    const closed = new Promise((r) => client!.events.once('close', r));
    const pending = client.execute('query-status').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    fake.clients[0]!.destroy();
    expect(await pending).toMatchObject({ errorClass: 'Disconnected' });
    await closed;
    expect(client.closed).toBe(true);
    await expect(client.execute('query-status')).rejects.toBeInstanceOf(QmpConnectionError);
  });

  it('times out a command that never gets a reply', async () => {
    server = (await fakeQmp(sockPath, () => {})).server;
    client = await QmpClient.connect(sockPath);
    await expect(client.execute('slow', {}, { timeoutMs: 100 })).rejects.toMatchObject({ errorClass: 'Timeout' });
  });
});

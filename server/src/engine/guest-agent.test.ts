import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentChannel } from './guest-agent';

/**
 * An agent as QEMU's chardev socket shows it: one client at a time (a second waits until the first leaves), qemu-ga's
 * protocol (`guest-sync-delimited` answered after a 0xFF). `echo` answers its argument, `slow` answers after `ms`.
 */
function fakeAgent(path: string) {
  const seen = { connections: 0, open: 0, clients: [] as Socket[] };
  let busy: Socket | null = null;
  const waiting: Socket[] = [];
  const serve = (sock: Socket) => {
    busy = sock;
    seen.connections++;
    seen.open++;
    seen.clients.push(sock);
    let buf = '';
    sock.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl).replace(/^\xff/, '');
        buf = buf.slice(nl + 1);
        const msg = JSON.parse(line) as { execute: string; arguments?: { id?: number; value?: unknown; ms?: number } };
        if (msg.execute === 'guest-sync-delimited') sock.write(Buffer.from(`\xff${JSON.stringify({ return: msg.arguments!.id })}\n`, 'latin1'));
        else if (msg.execute === 'echo') sock.write(`${JSON.stringify({ return: msg.arguments!.value })}\n`);
        else if (msg.execute === 'slow') setTimeout(() => !sock.destroyed && sock.write(`${JSON.stringify({ return: 'late' })}\n`), msg.arguments!.ms);
        else sock.write(`${JSON.stringify({ error: { class: 'CommandNotFound', desc: msg.execute } })}\n`);
      }
    });
    sock.on('close', () => {
      seen.open--;
      busy = null;
      const next = waiting.shift();
      if (next) serve(next);
    });
  };
  const server: Server = createServer((sock) => (busy ? waiting.push(sock) : serve(sock)));
  return { server, seen, listen: () => new Promise<void>((r) => server.listen(path, r)) };
}

const until = async (ok: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('AgentChannel: the guest agent port held open while the machine runs', () => {
  let dir: string;
  let agent: ReturnType<typeof fakeAgent>;
  let channel: AgentChannel;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-'));
    agent = fakeAgent(join(dir, 'qga.sock'));
    await agent.listen();
    channel = new AgentChannel('m1', join(dir, 'qga.sock'));
  });
  afterEach(async () => {
    channel.close();
    for (const c of agent.seen.clients) c.destroy();
    await new Promise((r) => agent.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds one connection from hold() on, and every exchange goes over it, in the order asked', async () => {
    channel.hold();
    await until(() => agent.seen.open === 1);
    const answers = await Promise.all([1, 2, 3].map((value) => channel.exchange('echo', { value }, 2000)));
    expect(answers).toEqual([1, 2, 3]);
    expect(agent.seen.connections).toBe(1);
    expect(agent.seen.open).toBe(1);
  });

  it('an error answer rejects with its class; the connection stays for the next', async () => {
    await expect(channel.exchange('nope', undefined, 2000)).rejects.toMatchObject({ errorClass: 'CommandNotFound' });
    expect(await channel.exchange('echo', { value: 'after' }, 2000)).toBe('after');
    expect(agent.seen.connections).toBe(1);
  });

  it("an answer that came too late is not the next exchange's answer", async () => {
    await expect(channel.exchange('slow', { ms: 300 }, 100)).rejects.toMatchObject({ code: 'agent-unavailable' });
    await new Promise((r) => setTimeout(r, 400)); // ('late' is in the connection now)
    expect(await channel.exchange('echo', { value: 'mine' }, 2000)).toBe('mine');
  });

  it('connects again when the connection closes (QEMU or the agent went away for a moment)', async () => {
    channel.hold();
    await until(() => agent.seen.open === 1);
    agent.seen.clients[0]!.destroy();
    await until(() => agent.seen.connections === 2 && agent.seen.open === 1);
    expect(await channel.exchange('echo', { value: 'again' }, 2000)).toBe('again');
  });

  it('close() lets go of the port for good: the connection ends, nothing connects again, exchanges are refused', async () => {
    channel.hold();
    await until(() => agent.seen.open === 1);
    channel.close();
    await until(() => agent.seen.open === 0);
    await expect(channel.exchange('echo', { value: 1 }, 500)).rejects.toMatchObject({ code: 'agent-unavailable' });
    channel.hold();
    await new Promise((r) => setTimeout(r, 200));
    expect(agent.seen.connections).toBe(1);
  });

  it('no socket (QEMU not listening): the exchange says agent-unavailable within its bound', async () => {
    const none = new AgentChannel('m2', join(dir, 'missing.sock'));
    const t0 = Date.now();
    await expect(none.exchange('echo', { value: 1 }, 500)).rejects.toMatchObject({ code: 'agent-unavailable' });
    expect(Date.now() - t0).toBeLessThan(2000);
    none.close();
  });
});

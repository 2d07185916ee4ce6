// Viewers through the balancer while a server process dies (processes/viewer-failover.test.ts and the
// bench's viewer-reconnection row): three processes behind HAProxy (helpers/processes.ts) whose
// desktops run on one lab hypervisor (server/src/host/lab.ts: a network namespace with its own libvirtd
// and sshd, the installation's storage folder as its `default` pool), added as an admin adds it; and
// a raw RFB viewer that stays open through the portal's websocket, which reconnects after a drop as
// the web's viewer page does (web/src/entities/viewer/reconnect.ts): a fresh ticket, a new websocket.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { registerLink, registerNamespace } from '../../../scripts/lib/test-run.mjs';
import { addLabHost, untilOnline } from '../../../scripts/lib/hypervisors.mjs';
import { fingerprintOf } from '../../src/engine/libvirt/hosts';
import { startLab, type Lab } from '../../src/host/lab';
import { ensureSshIdentity, publicKey } from '../../src/host/ssh-identity';
import { api, signIn } from './process';
import { startProcesses, type ProcessCluster } from './processes';
import { vncAuthResponse } from './vnc-probe';
import { until } from './wait';

export type ViewerCluster = {
  cluster: ProcessCluster;
  lab: Lab;
  /** The running desktops and their owners' sessions. */
  desktops: { token: string; id: string }[];
  close(): Promise<void>;
};

/**
 * Three processes (ports `firstPort`…), a lab of one host on `subnet` (`tag` names it), and the first
 * desktop (not the GPU one) of each of `owners` started on it. `env` goes to every process.
 */
export async function startViewerCluster(opts: {
  adminUrl: string;
  firstPort: number;
  prefix: string;
  subnet: string;
  tag: string;
  owners: string[];
  env?: Record<string, string>;
  kvm?: boolean;
  timeoutMs: number;
}): Promise<ViewerCluster> {
  // The installation's key made first, so the lab (trusting it, its storage folder as the `default` pool)
  // comes up beside the processes.
  const dataDir = mkdtempSync(`/tmp/${opts.prefix}-`);
  const labDir = mkdtempSync(`/tmp/${opts.prefix}-lab-`);
  await ensureSshIdentity(dataDir);
  const labStarting = startLab({
    dir: labDir,
    subnet: opts.subnet,
    hosts: 1,
    tag: opts.tag,
    authorizedKeys: [await publicKey(dataDir)],
    sharedPool: { name: 'default', path: join(dataDir, 'storage') },
    kvm: opts.kvm,
    timeoutMs: opts.timeoutMs,
  });
  registerNamespace(`vdilab-${opts.tag}-1`);
  registerLink(`vdilab${opts.tag}`);
  const [started, labbed] = await Promise.allSettled([
    startProcesses({ adminUrl: opts.adminUrl, n: 3, firstPort: opts.firstPort, prefix: opts.prefix, env: opts.env, dataDir }),
    labStarting,
  ]);
  const cluster = started.status === 'fulfilled' ? started.value : undefined;
  const lab = labbed.status === 'fulfilled' ? labbed.value : undefined;
  const close = async () => {
    await cluster?.close();
    await lab?.stop();
    rmSync(labDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  };
  if (!cluster || !lab) {
    await close();
    throw (started.status === 'rejected' ? started.reason : (labbed as PromiseRejectedResult).reason) as Error;
  }
  try {
    const admin = await signIn(cluster.url, 'admin');
    const callVia = (url: string) => async (method: string, path: string, body?: unknown) => api(url, admin, path, { method, body });
    const host = (await addLabHost(callVia(cluster.url), lab.hosts[0]!, fingerprintOf)) as { id: string };
    // Every process has it connected (the others hear of it through the peers' topic): any may hold a viewer.
    for (let i = 0; i < 3; i++) await untilOnline(callVia(cluster.direct(i)), [host.id], opts.timeoutMs);

    const desktops: { token: string; id: string }[] = [];
    for (const owner of opts.owners) {
      const token = await signIn(cluster.url, owner);
      const mine = (await api<{ id: string; name: string }[]>(cluster.url, token, '/user/desktops')).body;
      const desk = mine.find((d) => d.name !== 'GPU desktop')!;
      const started = await api(cluster.url, token, `/desktop/start/${desk.id}`);
      if (started.status !== 200) throw new Error(`${owner}'s desktop did not start: ${started.status} ${JSON.stringify(started.body)}`);
      desktops.push({ token, id: desk.id });
    }
    for (const d of desktops) {
      await until('the desktop to run', async () => (await api<{ id: string; state: string }[]>(cluster.url, d.token, '/user/desktops')).body.find((x) => x.id === d.id)?.state === 'Started', opts.timeoutMs);
    }
    return { cluster, lab, desktops, close };
  } catch (err) {
    const output = cluster.output();
    await close();
    throw new Error(`${(err as Error).message}\n${output.slice(-3000)}`);
  }
}

/** A refusal of the viewer's ticket: the answer, not a process that went away (see renewMayPass in the web). */
export class TicketRefused extends Error {
  constructor(readonly status: number) {
    super(`the viewer ticket was refused (${status})`);
  }
}

/** A fresh browser-vnc ticket of a desktop through `url` (the balancer): what the page's renew asks. */
export async function vncTicketVia(url: string, token: string, desktopId: string): Promise<{ token: string; password: string }> {
  const r = await api<{ cookie?: string }>(url, token, `/desktop/${desktopId}/viewer/browser-vnc`).catch(() => ({ status: 0, body: {} as { cookie?: string } }));
  if (r.status !== 200) {
    if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) throw new TicketRefused(r.status);
    throw new Error(`no ticket (${r.status || 'no answer'})`);
  }
  return JSON.parse(Buffer.from(r.body.cookie!, 'base64url').toString()) as { token: string; password: string };
}

export type HeldViewer = {
  /** The process holding its websocket (the upgrade's X-Server-Id). */
  server: string;
  /** Resolves with the websocket's close code once it ends (1006: gone without a close frame). */
  ended: Promise<number>;
  close(): void;
};

/**
 * A viewer through `url`: a fresh ticket, the websocket, RFB 3.8 with the ticket's password, one
 * framebuffer update asked and received; then it stays open (answering nothing more) until closed or dropped.
 */
export async function holdViewer(url: string, token: string, desktopId: string, timeoutMs = 15_000): Promise<HeldViewer> {
  const ticket = await vncTicketVia(url, token, desktopId);
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/v3/vnc?token=${encodeURIComponent(ticket.token)}`);
  let server = '';
  ws.on('upgrade', (res) => (server = String(res.headers['x-server-id'] ?? '')));
  let why = '';
  const ended = new Promise<number>((resolve) =>
    ws.on('close', (code, reason) => {
      why = `${code}${reason.length ? ` ${reason.toString()}` : ''}`;
      resolve(code);
    }),
  );
  ws.on('error', () => undefined); // ends in 'close'
  let buf = Buffer.alloc(0);
  let wake: (() => void) | null = null;
  let closed = false;
  ws.on('message', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    wake?.();
  });
  void ended.then(() => {
    closed = true;
    wake?.();
  });
  const read = async (n: number) => {
    while (buf.length < n) {
      if (closed) throw new Error(`the viewer websocket closed (${why})`);
      await new Promise<void>((r) => (wake = r));
    }
    const out = buf.subarray(0, n);
    buf = buf.subarray(n);
    return out;
  };
  const handshake = async () => {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      void ended.then((code) => reject(new Error(`the viewer websocket closed (${code}) before it opened`)));
    });
    await read(12);
    ws.send(Buffer.from('RFB 003.008\n'));
    const types = [...(await read((await read(1))[0]!))];
    if (!types.includes(2)) throw new Error('VNC asked no password');
    ws.send(Buffer.from([2]));
    ws.send(vncAuthResponse(ticket.password, await read(16)));
    if ((await read(4)).readUInt32BE(0) !== 0) throw new Error('VNC authentication failed');
    ws.send(Buffer.from([1])); // ClientInit, shared
    const init = await read(24);
    await read(init.readUInt32BE(20));
    const req = Buffer.alloc(10);
    req.writeUInt8(3, 0);
    req.writeUInt16BE(init.readUInt16BE(0), 6);
    req.writeUInt16BE(init.readUInt16BE(2), 8);
    ws.send(req);
    // The first message after the request: a FramebufferUpdate (0), whatever it holds after.
    while ((await read(1))[0] !== 0);
    buf = Buffer.alloc(0);
    ws.removeAllListeners('message');
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([handshake(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no first frame in time')), timeoutMs)))]);
  } catch (err) {
    ws.terminate();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return { server, ended, close: () => ws.terminate() };
}

/** The wait before reconnection attempt n, as the web's viewer page (0, then 250 ms doubling up to 2 s). */
const delayBefore = (n: number) => (n <= 0 ? 0 : Math.min(2_000, 250 * 2 ** (n - 1)));

/**
 * After a drop, as the page does: a fresh ticket and a new viewer through `url`, again after a short
 * backoff while no process answers or the new connection fails, until the first frame or `boundMs`.
 */
export async function reconnectViewer(url: string, token: string, desktopId: string, boundMs: number): Promise<HeldViewer> {
  const deadline = Date.now() + boundMs;
  for (let n = 0; ; n++) {
    await new Promise((r) => setTimeout(r, Math.min(delayBefore(n), Math.max(0, deadline - Date.now()))));
    try {
      return await holdViewer(url, token, desktopId, Math.max(1_000, deadline - Date.now()));
    } catch (err) {
      if (err instanceof TicketRefused || Date.now() >= deadline) throw err;
    }
  }
}

// Small protocol clients for the RDP doors' tests: an RDCleanPath request over the browser
// viewer's websocket, and an MS-TSGU client over TLS + websocket (what FreeRDP sends, packet by
// packet, so each refusal can be read exactly). Real clients (Chromium, xfreerdp) are in the tests.
import { scaled } from './slowdown';
import { until } from './wait';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { Browser, BrowserContext, Page } from 'playwright';
import WebSocket from 'ws';
import { decodeAnswer, encodeRequest } from '../../src/rdp/rdcleanpath';
import { client, packetReader, PKT, statusOf, type Packet } from '../../src/rdp/tsgu';
import { frame, frameReader, OPCODE } from '../../src/rdp/ws-frames';
import { launchTestBrowser } from './browser';

/** An X.224 Connection Request as a client writes it: cookie + RDP_NEG_REQ asking TLS. */
export function x224Request(user = 'test'): Buffer {
  const cookie = Buffer.from(`Cookie: mstshash=${user}\r\n`, 'latin1');
  const neg = Buffer.from([0x01, 0x00, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00]); // TYPE_RDP_NEG_REQ, PROTOCOL_SSL
  const body = Buffer.concat([Buffer.from([0xe0, 0, 0, 0, 0, 0]), cookie, neg]);
  const li = Buffer.from([body.length]);
  const tpdu = Buffer.concat([li, body]);
  const head = Buffer.from([3, 0, 0, 0]);
  head.writeUInt16BE(4 + tpdu.length, 2);
  return Buffer.concat([head, tpdu]);
}

/** Sends one RDCleanPath request and answers the proxy's first answer (or the close). */
export function cleanPathRequest(url: string, req: { token?: string; destination?: string }, timeoutMs = 20_000) {
  return new Promise<{ answer?: ReturnType<typeof decodeAnswer>; close?: number; ws: WebSocket }>((resolve) => {
    const ws = new WebSocket(url);
    const timer = setTimeout(() => resolve({ ws }), scaled(timeoutMs));
    ws.once('open', () => ws.send(encodeRequest({ proxyAuth: req.token, destination: req.destination, x224: x224Request() })));
    ws.once('message', (data: Buffer) => {
      clearTimeout(timer);
      resolve({ answer: decodeAnswer(data), ws });
    });
    ws.once('close', (code) => {
      clearTimeout(timer);
      resolve({ close: code, ws });
    });
    ws.once('error', () => undefined);
  });
}

/** An RD Gateway conversation: connect (TLS, websocket upgrade), then send packets and read answers. */
export async function gatewayClient(port: number, host = '127.0.0.1') {
  const socket: TLSSocket = await new Promise((resolve, reject) => {
    const s = tlsConnect({ host, port, rejectUnauthorized: false }, () => resolve(s));
    s.once('error', reject);
  });
  const key = 'SV[TLT\\M[XOXYWH'; // FreeRDP's keys are not base64: the gateway must take them as they are
  socket.write(
    `RDG_OUT_DATA /remoteDesktopGateway/ HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      `Sec-Websocket-Version: 13\r\nSec-Websocket-Key: ${key}\r\nRDG-Connection-Id: {${randomBytes(8).toString('hex')}}\r\nRDG-Auth-Scheme: PAA\r\nContent-Length: 0\r\n\r\n`,
  );
  let head = Buffer.alloc(0);
  const frames = frameReader({ requireMask: false });
  const packets = packetReader();
  const inbox: Packet[] = [];
  let closed = false;
  let wake: (() => void) | null = null;
  const status: string = await new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const rest = head.subarray(end + 4);
      socket.on('data', (c: Buffer) => feed(c));
      if (rest.length) feed(rest);
      resolve(head.subarray(0, end).toString('latin1').split('\r\n')[0]!);
    };
    socket.on('data', onData);
  });
  function feed(c: Buffer) {
    for (const f of frames(c)) {
      if (f.opcode === OPCODE.close) closed = true;
      else if (f.opcode === OPCODE.binary) inbox.push(...packets(f.payload));
    }
    wake?.();
  }
  socket.once('close', () => {
    closed = true;
    wake?.();
  });
  const mask = () => randomBytes(4);
  return {
    status,
    send: (p: Buffer) => socket.write(frame(OPCODE.binary, p, mask())),
    /** The next packet, or null once the gateway closed without one. */
    async next(timeoutMs = 15_000): Promise<Packet | null> {
      const end = Date.now() + scaled(timeoutMs);
      while (!inbox.length) {
        if (closed || Date.now() > end) return null;
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 200);
        });
        wake = null;
      }
      return inbox.shift()!;
    },
    close: () => socket.destroy(),
  };
}

/** Runs the handshake and tunnel with a PAA token; answers the tunnel's status and the client to go on with. */
export async function gatewayTunnel(port: number, token: string) {
  const gw = await gatewayClient(port);
  gw.send(client.handshake());
  const hs = await gw.next();
  if (!hs || hs.type !== PKT.handshakeResponse || statusOf(hs) !== 0) throw new Error('handshake failed');
  gw.send(client.tunnelCreate(token));
  const tunnel = await gw.next();
  return { gw, tunnelStatus: tunnel ? statusOf(tunnel) : -1 };
}

/** How many pixels of a 24-bit RGB buffer match. */
export function countPixels(rgb: Buffer, match: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let i = 0; i + 2 < rgb.length; i += 3) if (match(rgb[i]!, rgb[i + 1]!, rgb[i + 2]!)) n++;
  return n;
}

/**
 * FreeRDP (xfreerdp, a full session) on an .rdp file (and/or `args`) under Xvfb: the screen (1024×768)
 * is read with xwd four times a second until `drawn` says the session shows, or `waitMs` passes, or
 * xfreerdp ends; the last screen is kept as PNG (`png`, netpbm). Answers whether it was drawn, how
 * long after the start, and the end of the log.
 */
export async function xfreerdpScreen(file: string | null, opts: { work: string; drawn: (rgb: Buffer) => boolean; waitMs?: number; png?: string; args?: string[] }) {
  const tag = randomBytes(4).toString('hex');
  const script = join(opts.work, `xfreerdp-${tag}.sh`);
  const ppm = join(opts.work, `screen-${tag}.ppm`);
  const done = `${ppm}.done`;
  const log = join(opts.work, `xfreerdp-${tag}.log`);
  const waitS = Math.ceil(scaled(opts.waitMs ?? 60_000) / 1000);
  writeFileSync(
    script,
    `#!/bin/sh
xfreerdp "$@" /cert:ignore /size:1024x700 > "${log}" 2>&1 &
pid=$!
end=$(( $(date +%s) + ${waitS} ))
while [ $(date +%s) -lt $end ] && [ ! -e "${done}" ]; do
  sleep 0.25
  xwd -root -silent | xwdtopnm > "${ppm}.tmp" 2>/dev/null && mv "${ppm}.tmp" "${ppm}"
  kill -0 $pid 2>/dev/null || break
done
kill $pid 2>/dev/null
wait $pid 2>/dev/null
exit 0
`,
    { mode: 0o755 },
  );
  const screen = () => {
    const data = existsSync(ppm) ? readFileSync(ppm) : Buffer.alloc(0);
    return data.subarray(Math.max(0, data.length - 1024 * 768 * 3));
  };
  let drawn = false;
  const timing: { drawnAfterMs: number | null } = { drawnAfterMs: null };
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const p = spawn('xvfb-run', ['-a', '-s', '-screen 0 1024x768x24', script, ...(file ? [file] : []), ...(opts.args ?? [])], { stdio: 'ignore' });
    const watch = setInterval(() => {
      if (!drawn && opts.drawn(screen())) {
        drawn = true;
        timing.drawnAfterMs = performance.now() - started;
        writeFileSync(done, '1');
      }
    }, 125);
    p.once('exit', () => {
      clearInterval(watch);
      resolve();
    });
  });
  drawn ||= opts.drawn(screen());
  if (opts.png && existsSync(ppm)) {
    await new Promise<void>((resolve) => spawn('sh', ['-c', `pnmtopng < '${ppm}' > '${opts.png}'`], { stdio: 'ignore' }).once('exit', () => resolve()));
  }
  const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-3000) : '';
  for (const f of [script, ppm, done, log]) rmSync(f, { force: true });
  return { drawn, drawnAfterMs: timing.drawnAfterMs, log: tail };
}

/**
 * Pixels of a browser RDP viewer's canvas (IronRDP, in its element's open shadow root) for which the
 * JavaScript expression `match` over r, g, b holds. A string: the server's TypeScript has no DOM types.
 */
export function canvasPixels(page: { evaluate(expression: string): Promise<unknown> }, match: string): Promise<number> {
  return page.evaluate(`(() => {
    const c = document.querySelector('iron-remote-desktop')?.shadowRoot?.querySelector('canvas');
    const ctx = c && c.getContext('2d');
    if (!ctx || !c.width) return 0;
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      const r = d[i], g = d[i + 1], b = d[i + 2];
      if (${match}) n++;
    }
    return n;
  })()`) as Promise<number>;
}

/** The session drawn in a browser RDP viewer: its pixels that are not the empty black. */
export const litPixels = (page: { evaluate(expression: string): Promise<unknown> }) => canvasPixels(page, 'r + g + b > 60');

/**
 * Chromium (the client of the browser RDP tests: IronRDP through the portal's RDCleanPath websocket),
 * its session cookie `token` for `serverUrl`. `open` goes to a viewer answer's `urlp` and answers the
 * page once the viewer says it is connected and the session is drawn (`whenDrawn` runs then, drawn
 * or not: a screenshot). Close it when done.
 */
export async function browserRdp(serverUrl: string, token: string) {
  const browser: Browser = await launchTestBrowser();
  let context: BrowserContext;
  try {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addCookies([{ name: 'isardvdi_session', value: token, url: serverUrl }]);
  } catch (e) {
    await browser.close();
    throw e;
  }
  return {
    context,
    async open(urlp: string, opts: { page?: Page; whenDrawn?: (page: Page) => Promise<unknown> } = {}) {
      const page = opts.page ?? (await context.newPage());
      await page.goto(`${serverUrl}${urlp}`);
      await page.locator('[data-testid="rdp-viewer"][data-state="connected"]').waitFor({ timeout: scaled(120_000) });
      // Drawn: pixels that are not the empty canvas's black (the session's clock and terminal).
      await until('the session to be drawn', async () => (await litPixels(page)) > 2_000, 60_000).finally(() => opts.whenDrawn?.(page));
      return page;
    },
    close: () => browser.close(),
  };
}

/** The keys of the characters typed with Shift on a US keyboard (Playwright's `type` presses no Shift for them). */
const SHIFTED: Record<string, string> = {
  _: 'Minus', '>': 'Period', '<': 'Comma', '~': 'Backquote', ':': 'Semicolon', '&': 'Digit7', '|': 'Backslash', '"': 'Quote', '!': 'Digit1',
  '@': 'Digit2', '#': 'Digit3', $: 'Digit4', '%': 'Digit5', '^': 'Digit6', '*': 'Digit8', '(': 'Digit9', ')': 'Digit0', '+': 'Equal', '?': 'Slash',
  '{': 'BracketLeft', '}': 'BracketRight',
};

/** Clicks into a browser RDP session and types a line, then Enter (Shift pressed for the characters that need it). */
export async function typeInSession(page: Page, line: string) {
  await page.locator('iron-remote-desktop canvas').click({ position: { x: 300, y: 300 } });
  for (const ch of line) {
    const shifted = SHIFTED[ch] ?? (/^[A-Z]$/.test(ch) ? `Key${ch}` : undefined);
    if (shifted) await page.keyboard.press(`Shift+${shifted}`, { delay: 50 });
    else await page.keyboard.type(ch, { delay: 50 });
  }
  await page.keyboard.press('Enter');
}

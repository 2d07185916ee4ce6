// A CPU profile of the server under test for one stretch of a row (BENCH_PROFILE_DIR, with the server started
// with `--inspect=127.0.0.1:<port>` through BENCH_SERVER_NODE_ARGS): the inspector's Profiler, started and stopped
// around the stretch, its profile written as <dir>/<name>.cpuprofile (open it in Chromium's DevTools). Off without
// BENCH_PROFILE_DIR: the bench's figures never depend on it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';

type Session = { stop: () => Promise<void> };

/** Starts profiling the server whose inspector listens on `port`; `stop()` writes the profile as `name`. */
export async function profileServer(port: number, name: string): Promise<Session> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return { stop: async () => {} };
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let next = 1;
  const waiting = new Map<number, (r: unknown) => void>();
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (m.id !== undefined) waiting.get(m.id)?.(m.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  await call('Profiler.setSamplingInterval', { interval: 200 });
  await call('Profiler.start');
  // What the stretch allocates too: sampled, every 32 KB (open as a .heapprofile in DevTools' Memory panel).
  await call('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return {
    stop: async () => {
      const r = (await call('Profiler.stop')) as { profile: unknown };
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(r.profile));
      const h = (await call('HeapProfiler.stopSampling')) as { profile: unknown };
      writeFileSync(join(dir, `${name}.heapprofile`), JSON.stringify(h.profile));
      ws.close();
    },
  };
}

// One directory per running machine under the driver's runDir. It holds everything needed to find
// and control the machine again after a server restart: the spec, the runtime record, QEMU's pid
// file and its sockets.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EngineError, type MachineRuntime, type MachineSpec } from '../driver';

export type RunPaths = {
  dir: string;
  qmp: string;
  vnc: string;
  serial: string;
  pidFile: string;
  spec: string;
  runtime: string;
  /** QEMU's own stdout/stderr (start errors, "terminating on signal …") */
  log: string;
  spiceSecret: string;
  vncSecret: string;
  credentials: string;
  /** the guest agent's port (org.qemu.guest_agent.0), a unix socket QEMU listens on */
  qga: string;
};

/** sun_path is 108 bytes including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

/** Machine ids become directory names: nothing that could climb out of runDir. */
export const MACHINE_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function runPaths(runDir: string, id: string): RunPaths {
  if (!MACHINE_ID_RE.test(id)) throw new EngineError('invalid-spec', `bad machine id ${JSON.stringify(id)}`);
  const dir = join(resolve(runDir), id);
  const paths: RunPaths = {
    dir,
    qmp: join(dir, 'qmp.sock'),
    vnc: join(dir, 'vnc.sock'),
    serial: join(dir, 'serial.log'),
    pidFile: join(dir, 'qemu.pid'),
    spec: join(dir, 'spec.json'),
    runtime: join(dir, 'runtime.json'),
    log: join(dir, 'qemu.log'),
    spiceSecret: join(dir, 'spice.secret'),
    vncSecret: join(dir, 'vnc.secret'),
    credentials: join(dir, 'credentials'),
    qga: join(dir, 'qga.sock'),
  };
  for (const s of [paths.qmp, paths.vnc, paths.qga]) {
    if (Buffer.byteLength(s) > MAX_SOCKET_PATH) {
      throw new EngineError('invalid-spec', `socket path too long for a unix socket (${Buffer.byteLength(s)} > ${MAX_SOCKET_PATH} bytes): choose a shorter runDir`);
    }
  }
  return paths;
}

/**
 * Fresh run dir, private to this user: it holds sockets that control the machine. Synchronous, as `writeSpec`: a
 * directory and a small file on a start's path, where each asynchronous step waited its turn of a busy event loop
 * (docs/decisions/0047-a-start-before-its-spawn.md).
 */
export function prepareRunDir(paths: RunPaths): void {
  rmSync(paths.dir, { recursive: true, force: true });
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
}

export async function removeRunDir(paths: RunPaths): Promise<void> {
  await rm(paths.dir, { recursive: true, force: true });
}

type StoredRuntime = Omit<MachineRuntime, 'startedAt'> & { startedAt: string };

/** Written before QEMU starts: a run dir without spec.json is not ours (see listRunDirs). */
export function writeSpec(paths: RunPaths, spec: MachineSpec): void {
  // The guest credentials and the first VNC password are QEMU's business only (read once from their own files).
  const { guestCredentials: _secret, vncPassword: _vnc, ...kept } = spec;
  writeFileSync(paths.spec, JSON.stringify(kept, null, 2), { mode: 0o600 });
}

export async function writeRuntime(paths: RunPaths, runtime: MachineRuntime): Promise<void> {
  const stored: StoredRuntime = { ...runtime, startedAt: runtime.startedAt.toISOString() };
  await writeFile(paths.runtime, JSON.stringify(stored, null, 2), { mode: 0o600 });
}

export type RunRecord = { paths: RunPaths; spec: MachineSpec | null; runtime: MachineRuntime | null; pid: number | null };

/** Reads what a run dir says about its machine. Missing or broken files read as null. */
export async function readRecord(paths: RunPaths): Promise<RunRecord> {
  const json = async <T>(file: string): Promise<T | null> => {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as T;
    } catch {
      return null;
    }
  };
  const spec = await json<MachineSpec>(paths.spec);
  const stored = await json<StoredRuntime>(paths.runtime);
  const runtime = stored ? { ...stored, startedAt: new Date(stored.startedAt) } : null;
  let pid = runtime?.pid ?? null;
  if (pid === null) {
    const text = await readFile(paths.pidFile, 'utf8').catch(() => '');
    const n = Number.parseInt(text.trim(), 10);
    pid = Number.isInteger(n) && n > 0 ? n : null;
  }
  return { paths, spec, runtime, pid };
}

/** Machine ids that have a run dir. Only directories holding a spec.json count: runDir might be
 *  misconfigured to a shared place, and we must never touch what is not ours. */
export async function listRunDirs(runDir: string): Promise<string[]> {
  const entries = await readdir(resolve(runDir), { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && existsSync(join(resolve(runDir), e.name, 'spec.json')))
    .map((e) => e.name);
}

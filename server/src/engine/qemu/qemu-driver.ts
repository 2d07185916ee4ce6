// The default driver: QEMU processes on this host, controlled over QMP. Each machine is a detached
// process (it survives a server restart) with a run dir under `runDir`; a new driver instance
// adopts the machines still running there.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import { availableMemoryBytes } from '../../host/memory';
import { join, resolve } from 'node:path';
import { detectAccel, type Accel, type AccelSetting } from '../accel';
import {
  EngineError,
  type HostCapabilities,
  type HypervisorDriver,
  type LaunchingScreen,
  type MachineEvent,
  type MachineRuntime,
  type MachineSpec,
  type MachineStatus,
} from '../driver';
import { QmpClient } from '../qmp';
import { buildQemuArgs, credentialsBlob, validateSpec, videoModel } from './args';
import { freeTcpPort } from './free-port';
import { QemuMachine } from './machine';
import { isOurQemu, readTail, signal, waitForProcessExit } from './process';
import { listRunDirs, prepareRunDir, readRecord, removeRunDir, runPaths, writeRuntime, writeSpec } from './run-dir';
import { waitForPattern } from './serial';
import { QemuSpawner, type QemuProcess } from './spawner';
import type { TapNetwork } from '../../network/guest-network';

export type QemuDriverOptions = {
  /** one sub-directory per machine; keep it short (unix socket paths are limited to 107 bytes) */
  runDir: string;
  accel?: AccelSetting;
  qemuBinary?: string;
  /** TCG translation cache cap per VM, MiB (QEMU's default lets it grow to 1 GiB) */
  tcgTbSizeMb?: number;
  /** address SPICE listens on; loopback by default, the server's proxy exposes it */
  spiceHost?: string;
  /** QEMU's seccomp sandbox */
  sandbox?: boolean;
  /** how often adopted machines are checked for exit */
  pollMs?: number;
  /** how long QEMU may take to come up (QMP greeting) */
  startTimeoutMs?: number;
  /** the guest network that `private` NICs are put on; without it such machines are refused */
  network?: TapNetwork;
};

const STATUS: Record<string, MachineStatus> = {
  running: 'running',
  paused: 'paused',
  suspended: 'paused',
  prelaunch: 'paused',
  inmigrate: 'paused',
  postmigrate: 'paused',
  'finish-migrate': 'paused',
  'restore-vm': 'paused',
  'save-vm': 'paused',
  debug: 'paused',
  watchdog: 'paused',
  colo: 'paused',
  shutdown: 'shutdown',
  'internal-error': 'crashed',
  'guest-panicked': 'crashed',
  'io-error': 'crashed',
};

export class QemuDriver implements HypervisorDriver {
  readonly name = 'qemu';
  readonly accel: Accel;
  readonly #opts: Required<Omit<QemuDriverOptions, 'accel' | 'network'>>;
  readonly #network: TapNetwork | undefined;
  readonly #machines = new Map<string, QemuMachine>();
  readonly #starting = new Set<string>();
  /** Starts whose QEMU is spawned and not up yet, with the screen a viewer may connect to already. */
  readonly #launching = new Map<string, LaunchingScreen>();
  readonly #listeners = new Set<(e: MachineEvent) => void>();
  readonly #ready: Promise<void>;
  readonly #spawner = new QemuSpawner();
  #closed = false;

  constructor(opts: QemuDriverOptions) {
    this.accel = detectAccel(opts.accel ?? 'auto');
    this.#opts = {
      runDir: resolve(opts.runDir),
      qemuBinary: opts.qemuBinary ?? 'qemu-system-x86_64',
      tcgTbSizeMb: opts.tcgTbSizeMb ?? 64,
      spiceHost: opts.spiceHost ?? '127.0.0.1',
      sandbox: opts.sandbox ?? true,
      pollMs: opts.pollMs ?? 1000,
      startTimeoutMs: opts.startTimeoutMs ?? 15_000,
    };
    this.#network = opts.network;
    this.#ready = this.#adoptRunning();
    this.#ready.catch(() => {}); // surfaced by the first call that awaits it
  }

  /** Resolves once machines left by an earlier server process are adopted (or cleaned). */
  ready(): Promise<void> {
    return this.#ready;
  }

  async capabilities(): Promise<HostCapabilities> {
    return {
      accel: this.accel,
      cpus: availableParallelism(),
      memoryMb: Math.floor(totalmem() / 1048576),
      freeMemoryMb: Math.floor(availableMemoryBytes() / 1048576),
    };
  }

  async start(spec: MachineSpec): Promise<MachineRuntime> {
    await this.#open();
    validateSpec(spec);
    if (spec.vncPassword !== undefined && (spec.vncPassword.length > 8 || spec.vncPassword.length === 0)) {
      throw new EngineError('invalid-spec', 'VNC passwords are 1 to 8 characters (RFB DES authentication)');
    }
    const previous = this.#machines.get(spec.id);
    if (previous && !previous.alive()) {
      // exited a moment ago and the poll has not noticed yet: finish it (one stopped event) first
      previous.checkNow();
      await previous.gone;
    }
    if (this.#machines.has(spec.id) || this.#starting.has(spec.id)) {
      throw new EngineError('already-running', `machine ${spec.id} is already running`);
    }
    this.#starting.add(spec.id);
    let launched!: (ok: boolean) => void;
    const settled = new Promise<boolean>((resolve) => (launched = resolve));
    try {
      const machine = await this.#launch(spec, settled);
      this.#machines.set(spec.id, machine);
      launched(true);
      this.#emit({ id: spec.id, type: 'started' });
      return { ...machine.runtime };
    } catch (err) {
      launched(false);
      throw err;
    } finally {
      this.#starting.delete(spec.id);
      this.#launching.delete(spec.id);
    }
  }

  launchingScreen(id: string): LaunchingScreen | undefined {
    return this.#launching.get(id);
  }

  async shutdown(id: string): Promise<void> {
    await (await this.#qmpOf(id)).execute('system_powerdown');
  }

  async reset(id: string): Promise<void> {
    await (await this.#qmpOf(id)).execute('system_reset');
  }

  async destroy(id: string): Promise<void> {
    await this.#open();
    const m = this.#machines.get(id);
    if (!m) {
      // Nothing running under this id; a stale run dir may still be there.
      const paths = runPaths(this.#opts.runDir, id);
      const rec = await readRecord(paths);
      if (rec.pid !== null && isOurQemu(rec.pid, paths.qmp)) {
        signal(rec.pid, 'SIGKILL');
        await waitForProcessExit(rec.pid, paths.qmp, 5000);
      }
      await removeRunDir(paths);
      return;
    }
    m.markDestroying();
    // `quit` lets QEMU flush and close the qcow2 files cleanly; signals are the fallback.
    const quit = await m
      .qmp()
      .then((q) => q.execute('quit', undefined, { timeoutMs: 2000 }))
      .then(() => true, () => false);
    if (!quit) signal(m.pid, 'SIGTERM');
    if (!(await waitForProcessExit(m.pid, m.paths.qmp, 5000))) {
      signal(m.pid, 'SIGKILL');
      await waitForProcessExit(m.pid, m.paths.qmp, 5000);
    }
    m.checkNow();
    await m.gone;
  }

  async status(id: string): Promise<MachineStatus> {
    await this.#open();
    const m = this.#machines.get(id);
    if (!m) return 'absent';
    if (m.alive()) {
      try {
        const s = await (await m.qmp()).execute('query-status');
        return STATUS[s.status] ?? 'running';
      } catch {
        // the process exists but its monitor does not answer: hung (or exiting right now)
        if (m.alive()) return 'crashed';
      }
    }
    // Gone but maybe not yet noticed by the watchers: finish it now, so that `stopped` is always
    // emitted before anyone is told 'absent'.
    m.checkNow();
    await m.gone;
    return 'absent';
  }

  async setViewerPassword(id: string, protocol: 'vnc' | 'spice', password: string, expiresInSeconds?: number): Promise<void> {
    const m = await this.#machine(id);
    if (!m.spec.graphics[protocol]) throw new EngineError('unsupported', `machine ${id} has no ${protocol} display`);
    if (protocol === 'vnc' && password.length > 8) {
      throw new EngineError('unsupported', 'VNC passwords are at most 8 characters (RFB DES authentication)');
    }
    if (expiresInSeconds !== undefined && (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1)) {
      throw new RangeError('expiresInSeconds must be a positive integer');
    }
    const q = await m.qmp();
    // Both at once: QMP answers in order, one round trip instead of two (a booting TCG guest makes each slow).
    await Promise.all([
      q.execute('set_password', { protocol, password }),
      q.execute('expire_password', { protocol, time: expiresInSeconds === undefined ? 'never' : `+${expiresInSeconds}` }),
    ]);
  }

  async screenshot(id: string): Promise<Buffer> {
    const m = await this.#machine(id);
    if (videoModel(m.spec) === 'none') throw new EngineError('unsupported', `machine ${id} has no display`);
    // QEMU 7.2 writes PNG itself: no image tools needed. The file lives in the private run dir.
    const file = join(m.paths.dir, `screen-${randomBytes(4).toString('hex')}.png`);
    try {
      await (await m.qmp()).execute('screendump', { filename: file, format: 'png' });
      return await readFile(file);
    } finally {
      await rm(file, { force: true });
    }
  }

  async waitForSerial(id: string, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const m = await this.#machine(id);
    try {
      return await waitForPattern(m.paths.serial, pattern, timeoutMs, m.stopped.signal);
    } catch (err) {
      if (m.stopped.signal.aborted) throw new EngineError('not-running', `machine ${id} stopped before ${pattern} appeared on its serial port`);
      throw err;
    }
  }

  async guestAgent(id: string, command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    return (await this.#machine(id)).agent.exchange(command, args, timeoutMs);
  }

  async list(): Promise<MachineRuntime[]> {
    await this.#open();
    return [...this.#machines.values()].filter((m) => m.alive()).map((m) => ({ ...m.runtime }));
  }

  onEvent(cb: (e: MachineEvent) => void): () => void {
    this.#listeners.add(cb);
    return () => this.#listeners.delete(cb);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#spawner.close();
    await this.#ready.catch(() => {});
    await Promise.all([...this.#machines.values()].map((m) => m.detach()));
    this.#machines.clear();
    this.#listeners.clear();
  }

  // ---- internals ------------------------------------------------------------------------------

  async #open(): Promise<void> {
    if (this.#closed) throw new EngineError('closed', 'driver is closed');
    await this.#ready;
  }

  async #machine(id: string): Promise<QemuMachine> {
    await this.#open();
    const m = this.#machines.get(id);
    if (!m || !m.alive()) throw new EngineError('not-running', `machine ${id} is not running`);
    return m;
  }

  async #qmpOf(id: string): Promise<QmpClient> {
    return (await this.#machine(id)).qmp();
  }

  #emit(e: MachineEvent): void {
    for (const cb of this.#listeners) {
      try {
        cb(e);
      } catch {
        // a listener's bug must not stop the others or the driver
      }
    }
  }

  #hooks = {
    emit: (e: MachineEvent) => this.#emit(e),
    gone: async (m: QemuMachine) => {
      if (this.#machines.get(m.spec.id) === m) this.#machines.delete(m.spec.id);
      // Persistent TAPs outlive QEMU: delete them before anyone hears `stopped` (a restart makes them again).
      await this.#deleteTaps(m.spec);
    },
  };

  /** The TAP of each `private` NIC of the spec, by NIC index. */
  #tapsOf(spec: MachineSpec): (string | undefined)[] {
    return spec.nics.map((n, i) => (n.network === 'private' && this.#network ? this.#network.tapName(spec.id, i) : undefined));
  }

  async #deleteTaps(spec: MachineSpec): Promise<void> {
    for (const tap of this.#tapsOf(spec)) if (tap) await this.#network!.deleteTap(tap).catch(() => undefined);
  }

  async #launch(spec: MachineSpec, launched: Promise<boolean>): Promise<QemuMachine> {
    const paths = runPaths(this.#opts.runDir, spec.id);
    mkdirSync(this.#opts.runDir, { recursive: true, mode: 0o700 });
    prepareRunDir(paths);
    writeSpec(paths, spec);

    if (spec.nics.some((n) => n.network === 'private') && !this.#network?.available) {
      await removeRunDir(paths);
      throw new EngineError('unsupported', `machine ${spec.id} needs the guest network, which this host does not have`);
    }
    // The files QEMU reads at start-up (small, written at once as the run dir is: prepareRunDir).
    // QEMU reads its first SPICE password from a file (never from argv, which `ps` shows). It is
    // random and never told to anyone: viewers get in only after setViewerPassword.
    if (spec.graphics.spice) writeFileSync(paths.spiceSecret, randomBytes(24).toString('base64url'), { mode: 0o600 });
    // Read by QEMU at start-up and deleted once it is up (like SPICE's first password): never on argv.
    if (spec.guestCredentials) writeFileSync(paths.credentials, credentialsBlob(spec.guestCredentials), { mode: 0o600 });
    if (spec.graphics.vnc && spec.vncPassword) writeFileSync(paths.vncSecret, spec.vncPassword, { mode: 0o600 });
    const spice = spec.graphics.spice ? { host: this.#opts.spiceHost, port: await freeTcpPort(this.#opts.spiceHost), secretFile: paths.spiceSecret } : undefined;
    const vncSecretFile = spec.graphics.vnc && spec.vncPassword ? paths.vncSecret : undefined;
    const taps = this.#tapsOf(spec);
    const args = buildQemuArgs(spec, {
      paths,
      accel: this.accel,
      tcgTbSizeMb: this.#opts.tcgTbSizeMb,
      spice,
      sandbox: this.#opts.sandbox,
      taps,
      credentialsFile: spec.guestCredentials ? paths.credentials : undefined,
      vncSecretFile,
    });
    try {
      for (const tap of taps) if (tap) await this.#network!.createTap(tap);
    } catch (err) {
      await this.#deleteTaps(spec);
      await removeRunDir(paths);
      throw new EngineError('start-failed', `could not make the network of machine ${spec.id}`, err instanceof Error ? err.message : String(err));
    }

    const fail = async (why: string, pid?: number): Promise<never> => {
      if (pid !== undefined) signal(pid, 'SIGKILL');
      const log = (await readTail(paths.log)).trim();
      if (pid !== undefined) await waitForProcessExit(pid, paths.qmp, 5000);
      await this.#deleteTaps(spec);
      await removeRunDir(paths);
      throw new EngineError('start-failed', `QEMU did not start machine ${spec.id}: ${why}`, log);
    };

    // Detached in its own process group with stdio to a file: the machine outlives this process. Spawned by the
    // spawner's small process (spawner.ts: a fork of the server costs in proportion to its memory).
    let child: QemuProcess;
    try {
      child = await this.#spawner.spawn(this.#opts.qemuBinary, args, paths.log);
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
    const exited = new Promise<string>((res) => child.once('exit', (code, sig) => res(code !== null ? `exit code ${code}` : `signal ${sig}`)));
    // Its screen, with the start's password from QEMU's first moment, may be connected to while QMP is still being reached.
    if (spec.graphics.vnc && vncSecretFile) {
      this.#launching.set(spec.id, { vnc: { socket: paths.vnc }, launched });
      this.#emit({ id: spec.id, type: 'launched' });
    }

    const connecting = QmpClient.connect(paths.qmp, { timeoutMs: this.#opts.startTimeoutMs });
    const first = await Promise.race([
      connecting.then((q) => ({ q }), (err: Error) => ({ err })),
      exited.then((how) => ({ exited: how })),
    ]);
    if ('exited' in first) {
      void connecting.then((q) => q.close(), () => {});
      return fail(first.exited, child.pid);
    }
    if ('err' in first) return fail(first.err.message, child.pid);
    const qmp = first.q;
    const runtime: MachineRuntime & { pid: number } = {
      id: spec.id,
      pid: child.pid!,
      startedAt: new Date(),
      ...(spec.graphics.vnc ? { vnc: { socket: paths.vnc } } : {}),
      ...(vncSecretFile ? { vncPasswordSet: true } : {}),
      ...(spice ? { spice: { host: spice.host, port: spice.port } } : {}),
    };
    // The secrets QEMU read at startup go (the current passwords live in QEMU only) while the runtime record is written.
    const files = Promise.all([
      rm(paths.spiceSecret, { force: true }),
      rm(paths.vncSecret, { force: true }),
      rm(paths.credentials, { force: true }),
      writeRuntime(paths, runtime),
    ]);
    try {
      // QEMU holds the TAPs open now: onto the bridge in the namespace with them.
      for (const tap of taps) if (tap) await this.#network!.attachTap(tap);
    } catch (err) {
      await files.catch(() => {});
      await qmp.close().catch(() => {});
      return fail(`could not attach its network: ${err instanceof Error ? err.message : String(err)}`, child.pid);
    }
    await files;
    return new QemuMachine({ spec, paths, runtime, child, qmp, hooks: this.#hooks, pollMs: this.#opts.pollMs });
  }

  /** Adopts machines that an earlier server process left running; cleans run dirs of dead ones. */
  async #adoptRunning(): Promise<void> {
    for (const id of await listRunDirs(this.#opts.runDir)) {
      const paths = runPaths(this.#opts.runDir, id);
      const rec = await readRecord(paths);
      if (!rec.spec || rec.pid === null || !isOurQemu(rec.pid, paths.qmp)) {
        await removeRunDir(paths);
        continue;
      }
      // QMP serves one client at a time; if it does not answer now, adopt anyway and retry later.
      const qmp = await QmpClient.connect(paths.qmp, { timeoutMs: 2000 }).catch(() => null);
      const runtime = rec.runtime ?? { id, pid: rec.pid, startedAt: new Date() };
      const machine = new QemuMachine({
        spec: rec.spec,
        paths,
        runtime: { ...runtime, pid: rec.pid },
        child: null,
        qmp,
        hooks: this.#hooks,
        pollMs: this.#opts.pollMs,
      });
      this.#machines.set(id, machine);
    }
    if (this.#network?.available) {
      // A crash between QEMU's start and the move leaves its TAP in the root namespace: attach it
      // now; TAPs of machines that are gone are deleted.
      const keep: string[] = [];
      for (const m of this.#machines.values()) {
        for (const tap of this.#tapsOf(m.spec)) {
          if (!tap) continue;
          keep.push(tap);
          await this.#network.attachTap(tap).catch(() => undefined);
        }
      }
      await this.#network.pruneTaps(keep);
    }
  }
}

// The hypervisor driver interface. Modules talk to machines only through this; the QEMU driver
// (qemu/) is the default, a libvirt driver can implement the same contract (see README.md).
import type { Accel } from './accel';

export type DiskBus = 'default' | 'virtio' | 'ide' | 'sata';

export type MachineSpec = {
  /** stable id (the desktop id); letters, digits, '-', '_', '.'; at most 64 characters */
  id: string;
  /** human-readable name (shown by hypervisor tools; never used in paths) */
  name: string;
  memoryMb: number;
  vcpus: number;
  /** `default` means the fastest bus the driver has (virtio). `format` defaults to qcow2. */
  disks: { path: string; bus: DiskBus; format?: 'qcow2' | 'raw' }[];
  /** attached read-only as CD-ROMs */
  isos: { path: string }[];
  /** devices of each kind are tried in the order listed; kinds not listed are not booted from */
  bootOrder: ('disk' | 'iso' | 'network')[];
  /** `user` (default): user-mode NAT, the guest reaches out, nobody reaches in. `private`: a TAP
   *  on the server's guest network (network/), where the guest gets an address the server reaches. */
  nics: { id: string; mac: string; model?: 'virtio' | 'e1000'; network?: 'user' | 'private' }[];
  /** `default`: qxl when SPICE is on (its native display), std otherwise */
  video: 'default' | 'std' | 'qxl' | 'virtio' | 'none';
  graphics: { vnc: boolean; spice: boolean };
  /** The desktop's guest credentials, handed to the guest through QEMU's fw_cfg
   *  (`opt/org.vdiportal/credentials`: base64 user name and password, a line each); guests that
   *  know it (the RDP guest) make that user. Never on QEMU's command line. */
  guestCredentials?: { username: string; password: string };
  /** The VNC password the machine starts with (at most 8 characters; never on a command line), so that its first
   *  viewer waits for no round trip to the hypervisor. A driver that takes it says so in the runtime
   *  (`vncPasswordSet`); one that does not lets nobody in until setViewerPassword. No expiry: set one with
   *  setViewerPassword. */
  vncPassword?: string;
  /** The hypervisor placement chose (its id); absent: this machine (`local`). Only the fleet reads it. */
  host?: string;
};

export type MachineStatus = 'running' | 'paused' | 'shutdown' | 'crashed' | 'absent';

/** Where a viewer reaches the machine's VNC server: a unix socket on this host (QEMU driver) or a
 *  TCP endpoint (libvirt on another host, from the domain XML's <graphics> port). */
export type VncEndpoint = { socket: string } | { host: string; port: number };

export type MachineRuntime = {
  id: string;
  /** QEMU's process id when the machine runs on this host */
  pid?: number;
  vnc?: VncEndpoint;
  spice?: { host: string; port: number };
  startedAt: Date;
  /** The spec's `vncPassword` is in force since the launch (the QEMU driver; absent: no password until setViewerPassword). */
  vncPasswordSet?: boolean;
  /** The hypervisor it runs on (the fleet's list sets it; absent from one host's own driver). */
  host?: string;
};

/** `launched`: its hypervisor's process is up and coming up (a `launchingScreen` may be asked); `started` follows. */
export type MachineEventType = 'launched' | 'started' | 'stopped' | 'reset' | 'crashed' | 'paused' | 'resumed';

/** The screen of a machine still coming up: its VNC server (not listening yet, perhaps), with the password the start
 *  gave it in force from the first moment; `launched` says whether its start succeeded. */
export type LaunchingScreen = { vnc: VncEndpoint; launched: Promise<boolean> };

/** `stopped` is emitted exactly once per run, whatever ended it (guest power-off, destroy, crash
 *  of QEMU itself), with the reason (`guest-shutdown`, `destroyed`, `host-signal`, `exit-code-1`…).
 *  `crashed` means the guest or the hypervisor failed (guest panic, internal error); a `stopped`
 *  follows if the machine then exits. */
/** `host`: the host it happened on (a fleet of hosts names it; one driver alone need not). */
export type MachineEvent = { id: string; type: MachineEventType; reason?: string; host?: string };

export type HostCapabilities = { accel: Accel; cpus: number; memoryMb: number; freeMemoryMb: number };

export interface HypervisorDriver {
  readonly name: string;
  capabilities(): Promise<HostCapabilities>;
  /** Boots the machine and resolves once the hypervisor runs it (not when the guest OS is up). */
  start(spec: MachineSpec): Promise<MachineRuntime>;
  /** Presses the ACPI power button; resolves when the request is delivered. The guest decides
   *  whether and when to power off: wait for the `stopped` event (see waitForStopped). */
  shutdown(id: string): Promise<void>;
  /** Hard stop. Resolves after the machine is gone and its runtime state is cleaned. Destroying an
   *  absent machine is not an error. `host`: on that host only (a fleet of hosts: a host that was
   *  lost and marked down may still run a machine of the same id when it comes back). */
  destroy(id: string, host?: string): Promise<void>;
  reset(id: string): Promise<void>;
  status(id: string): Promise<MachineStatus>;
  /** Sets the one password a viewer must present. VNC passwords are at most 8 characters (the RFB
   *  DES scheme ignores the rest, so longer ones are refused). `expiresInSeconds` makes the
   *  hypervisor refuse new connections with it after that time. */
  setViewerPassword(id: string, protocol: 'vnc' | 'spice', password: string, expiresInSeconds?: number): Promise<void>;
  /** PNG of the current screen. */
  screenshot(id: string): Promise<Buffer>;
  /** Waits for a line on the first serial port that matches `pattern` (e.g. the demo guest's
   *  READY marker, which carries its IP). Rejects on timeout or when the machine stops. */
  waitForSerial(id: string, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** One command to QEMU's guest agent (qemu-ga) on the machine's `org.qemu.guest_agent.0` port
   *  (guest-sync first, then the command); resolves with its `return`. No agent answering within
   *  `timeoutMs`: EngineError `agent-unavailable`; an error answer: GuestAgentError (guest-agent.ts). */
  guestAgent(id: string, command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown>;
  /** Machines running now, including those started by an earlier server process. */
  list(): Promise<MachineRuntime[]>;
  /** A machine whose start is under way and whose screen may be connected to already (after its `launched` event): a
   *  viewer opened with the start reaches it the moment it listens, as one connects to a QEMU started by hand. */
  launchingScreen?(id: string): LaunchingScreen | undefined;
  onEvent(cb: (e: MachineEvent) => void): () => void;
  /** Detaches: machines keep running and a later driver instance reattaches to them. */
  close(): Promise<void>;
}

export type EngineErrorCode =
  | 'invalid-spec'
  | 'already-running'
  | 'not-running'
  | 'start-failed'
  | 'unsupported'
  | 'timeout'
  | 'closed'
  /** a remote hypervisor cannot be reached, or its connection was lost (libvirt keepalive) */
  | 'host-unreachable'
  /** the SSH host key of a remote hypervisor is unknown or changed */
  | 'host-key-unknown'
  /** a machine on the guest network, on a hypervisor not prepared for it (no guest bridge) */
  | 'guest-network-missing'
  /** a remote hypervisor refused or failed an operation (its message, without credentials, in detail) */
  | 'hypervisor-error'
  /** the caller called the operation off (an upload whose job was cancelled) */
  | 'cancelled'
  /** the machine's guest agent does not answer (none installed, not started yet, no agent port) */
  | 'agent-unavailable';

/** A driver refused or failed an operation; `code` is stable for callers to branch on. */
export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

/** Resolves with the stop reason once `id` is no longer running (at once if it is absent). */
export function waitForStopped(driver: HypervisorDriver, id: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      off();
      fn();
    };
    // Subscribe before asking the status, so a stop between the two cannot be missed.
    const off = driver.onEvent((e) => {
      if (e.id === id && e.type === 'stopped') finish(() => resolve(e.reason));
    });
    const timer = setTimeout(
      () => finish(() => reject(new EngineError('timeout', `${id} still running after ${timeoutMs} ms`))),
      timeoutMs,
    );
    driver.status(id).then(
      (s) => {
        if (s === 'absent') finish(() => resolve(undefined));
      },
      (err: unknown) => finish(() => reject(err)),
    );
  });
}

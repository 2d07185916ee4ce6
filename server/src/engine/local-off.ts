import { EngineError, type HostCapabilities, type HypervisorDriver, type MachineRuntime, type MachineStatus } from './driver';

/** Why the `local` host is offline in a process started with LOCAL_HYPERVISOR=off (shown to admins as its last error). */
export const LOCAL_OFF_REASON = 'This server process runs no desktops on its own machine (LOCAL_HYPERVISOR=off)';

/**
 * The `local` member of the fleet in a process that does not own this machine's QEMU (several server
 * processes on one machine or one installation: README, cluster mode). It runs nothing and knows of no
 * machine; a start is refused. Placement never picks it: its host directory reports it offline.
 */
export class LocalOffDriver implements HypervisorDriver {
  readonly name = 'local-off';

  async capabilities(): Promise<HostCapabilities> {
    throw new EngineError('unsupported', LOCAL_OFF_REASON);
  }
  async start(): Promise<MachineRuntime> {
    throw new EngineError('unsupported', LOCAL_OFF_REASON);
  }
  async shutdown(id: string): Promise<void> {
    throw new EngineError('not-running', `machine ${id} is not running here`);
  }
  async destroy(): Promise<void> {}
  async reset(id: string): Promise<void> {
    throw new EngineError('not-running', `machine ${id} is not running here`);
  }
  async status(): Promise<MachineStatus> {
    return 'absent';
  }
  async setViewerPassword(id: string): Promise<void> {
    throw new EngineError('not-running', `machine ${id} is not running here`);
  }
  async screenshot(id: string): Promise<Buffer> {
    throw new EngineError('not-running', `machine ${id} is not running here`);
  }
  async guestAgent(id: string): Promise<unknown> {
    throw new EngineError('not-running', `machine ${id} is not running here`);
  }
  async waitForSerial(id: string): Promise<RegExpMatchArray> {
    throw new EngineError('not-running', `machine ${id} is not running here`);
  }
  async list(): Promise<MachineRuntime[]> {
    return [];
  }
  onEvent(): () => void {
    return () => {};
  }
  async close(): Promise<void> {}
}

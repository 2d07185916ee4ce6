import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../context';
import type { MachineRuntime } from '../../engine/driver';
import type { DomainRow } from '../shared/domains';
import { sharedVncPassword } from './service';

/** A server process as the VNC password sees it: the installation's secret and the QEMU it sets passwords on. */
function processOf(secret: string, qemu: { password?: string; sets: number }) {
  const setViewerPassword = async (_id: string, _protocol: string, password: string) => {
    qemu.password = password;
    qemu.sets++;
  };
  return { config: { secret }, engine: { driver: { setViewerPassword } } } as unknown as AppContext;
}

describe('the VNC password of a running desktop', () => {
  const runtime: MachineRuntime = { id: 'd1', pid: 42, startedAt: new Date('2026-01-01T10:00:00Z') };
  const row = { id: 'd1', startedAt: new Date('2026-01-01T10:00:00Z') } as DomainRow;

  it('is the same from every process of the installation: a ticket of one never locks out a viewer of another', async () => {
    const qemu = { sets: 0 } as { password?: string; sets: number };
    const a = processOf('secret', qemu);
    const b = processOf('secret', qemu);
    const first = await sharedVncPassword(a, row, runtime);
    const second = await sharedVncPassword(b, row, runtime);
    expect(second).toBe(first);
    expect(qemu.password).toBe(first);
    expect(first).toMatch(/^[A-Za-z2-9]{8}$/);
    // A process sets it once while its setting is fresh.
    await sharedVncPassword(a, row, runtime);
    expect(qemu.sets).toBe(2);
  });

  it('changes with the run of the desktop and with the installation', async () => {
    const qemu = { sets: 0 };
    const a = processOf('secret', qemu);
    const first = await sharedVncPassword(a, row, runtime);
    const restarted = { ...row, startedAt: new Date('2026-01-01T11:00:00Z') } as DomainRow;
    expect(await sharedVncPassword(a, restarted, { ...runtime, startedAt: restarted.startedAt! })).not.toBe(first);
    expect(await sharedVncPassword(processOf('other', qemu), row, runtime)).not.toBe(first);
  });
});

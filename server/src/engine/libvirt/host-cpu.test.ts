import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLibvirtHost, type LibvirtTestHost } from '../../../test/helpers/libvirt-host';
import { scaled } from '../../../test/helpers/slowdown';
import { until } from '../../../test/helpers/wait';
import { cpuBusyPercent } from '../hosts';
import { LibvirtDriver } from './libvirt-driver';

// A remote hypervisor's CPU load (issue 29: the dashboard's history and /metrics showed 0 for every host
// but this one): libvirt's node CPU stats read at each of the host's heartbeats, the busy share between
// two readings. The computation, then the real call against a lab host's own libvirtd.

describe('cpuBusyPercent', () => {
  it('is the busy share between two readings, since boot without an earlier one or after a reboot', () => {
    expect(cpuBusyPercent({ idle: 100, total: 200 }, { idle: 130, total: 300 })).toBe(70);
    expect(cpuBusyPercent(undefined, { idle: 75, total: 100 })).toBe(25);
    // The counters went back (the host rebooted): since its boot.
    expect(cpuBusyPercent({ idle: 1000, total: 5000 }, { idle: 90, total: 100 })).toBe(10);
    // No time passed: 0, never a division by zero; bounded to 0–100, one decimal.
    expect(cpuBusyPercent({ idle: 10, total: 20 }, { idle: 10, total: 20 })).toBe(0);
    expect(cpuBusyPercent({ idle: 0, total: 0 }, { idle: 1, total: 3 })).toBe(66.7);
  });
});

describe('a libvirt host\'s CPU times', () => {
  let host: LibvirtTestHost;
  let driver: LibvirtDriver | undefined;
  beforeAll(async () => {
    host = await startLibvirtHost(72, '10.249');
    driver = new LibvirtDriver({ uri: host.uri, graphicsAddress: host.address, accel: 'tcg' });
    await driver.ready();
  }, scaled(30_000));
  afterAll(async () => {
    await driver?.close();
    await host?.stop();
  }, scaled(30_000));

  it('are read with the host\'s numbers; two readings give a load between 0 and 100', async () => {
    const first = await driver!.hostInfo();
    expect(first.cpuTimes).not.toBeNull();
    expect(first.cpuTimes!.total).toBeGreaterThan(first.cpuTimes!.idle);
    // The node's counters move on (nanoseconds of all CPUs): a later reading has more time.
    let second = first;
    await until('a later CPU reading', async () => (second = await driver!.hostInfo()).cpuTimes!.total > first.cpuTimes!.total, 10_000);
    const load = cpuBusyPercent(first.cpuTimes, second.cpuTimes!);
    expect(load).toBeGreaterThanOrEqual(0);
    expect(load).toBeLessThanOrEqual(100);
  }, scaled(30_000));
});

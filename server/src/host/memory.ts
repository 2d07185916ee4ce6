import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';

/**
 * This machine's memory a guest can get, in bytes: free, plus buffers and page cache (the kernel
 * gives them back). The same sum a remote host's libvirt answers (its node memory stats, read by
 * libvirt-helper.py), so placement compares this server's host with the others on one measure
 * (`os.freemem()` is MemAvailable on Linux, libvirt's `getFreeMemory` is MemFree alone: the server's
 * own host looked gigabytes emptier than an equal remote one).
 */
export function availableMemoryBytes(meminfo = readMeminfo()): number {
  if (!meminfo) return freemem();
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(meminfo)?.[1] ?? NaN);
  const sum = kib('MemFree') + kib('Buffers') + kib('Cached');
  return Number.isFinite(sum) ? sum * 1024 : freemem();
}

function readMeminfo(): string | null {
  try {
    return readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return null;
  }
}

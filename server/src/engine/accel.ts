// Which accelerator QEMU should use. `auto` must not trust /dev/kvm alone: on the project's own
// machines /dev/kvm is served by kvm_pvm (paravirtual KVM), which opens fine and then hangs or
// crashes ordinary guests (guest-image.md §0). QEMU's `-accel kvm:tcg` fallback does not help
// there, so we decide ourselves. `-cpu host` is never used: it aborts under nested/pvm KVM.
import { accessSync, constants, existsSync } from 'node:fs';

export type AccelSetting = 'kvm' | 'tcg' | 'auto';
export type Accel = 'kvm' | 'tcg';

/** File-system probes, injectable so the decision can be tested without the real devices. */
export type AccelProbes = {
  /** true when the path can be opened read-write by this process */
  canReadWrite(path: string): boolean;
  exists(path: string): boolean;
};

export const realProbes: AccelProbes = {
  canReadWrite(path) {
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
      return true;
    } catch {
      return false;
    }
  },
  exists: (path) => existsSync(path),
};

export type AccelDecision = { accel: Accel; reason: string };

export function decideAccel(setting: AccelSetting, probes: AccelProbes = realProbes): AccelDecision {
  if (setting === 'kvm') return { accel: 'kvm', reason: 'ACCEL=kvm' };
  if (setting === 'tcg') return { accel: 'tcg', reason: 'ACCEL=tcg' };
  if (!probes.exists('/dev/kvm')) return { accel: 'tcg', reason: '/dev/kvm missing' };
  if (!probes.canReadWrite('/dev/kvm')) return { accel: 'tcg', reason: '/dev/kvm not read-write for this user' };
  if (probes.exists('/sys/module/kvm_pvm')) {
    return { accel: 'tcg', reason: 'kvm_pvm loaded: paravirtual KVM cannot run ordinary guests' };
  }
  return { accel: 'kvm', reason: '/dev/kvm usable' };
}

export function detectAccel(setting: AccelSetting, probes: AccelProbes = realProbes): Accel {
  return decideAccel(setting, probes).accel;
}

/** The `-accel` argument. TCG's translation cache is capped (default would be up to 1 GiB of
 *  lazily-touched memory per VM); KVM needs nothing extra. */
export function accelArg(accel: Accel, tcgTbSizeMb: number): string {
  return accel === 'kvm' ? 'kvm' : `tcg,tb-size=${tcgTbSizeMb}`;
}

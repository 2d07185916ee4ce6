import { describe, expect, it } from 'vitest';
import { accelArg, decideAccel, detectAccel, type AccelProbes } from './accel';

function probes(files: { kvm?: 'rw' | 'ro'; pvm?: boolean }): AccelProbes {
  return {
    exists: (p) => (p === '/dev/kvm' ? files.kvm !== undefined : p === '/sys/module/kvm_pvm' ? !!files.pvm : false),
    canReadWrite: (p) => p === '/dev/kvm' && files.kvm === 'rw',
  };
}

describe('detectAccel', () => {
  it('auto picks KVM only when /dev/kvm is read-write and kvm_pvm is absent', () => {
    expect(detectAccel('auto', probes({ kvm: 'rw' }))).toBe('kvm');
    expect(detectAccel('auto', probes({ kvm: 'rw', pvm: true }))).toBe('tcg');
    expect(detectAccel('auto', probes({ kvm: 'ro' }))).toBe('tcg');
    expect(detectAccel('auto', probes({}))).toBe('tcg');
  });

  it('an explicit setting wins over the probes', () => {
    expect(detectAccel('kvm', probes({}))).toBe('kvm');
    expect(detectAccel('tcg', probes({ kvm: 'rw' }))).toBe('tcg');
  });

  it('says why', () => {
    expect(decideAccel('auto', probes({ kvm: 'rw', pvm: true })).reason).toMatch(/kvm_pvm/);
  });

  it('builds the -accel argument, capping the TCG translation cache', () => {
    expect(accelArg('tcg', 64)).toBe('tcg,tb-size=64');
    expect(accelArg('kvm', 64)).toBe('kvm');
  });
});

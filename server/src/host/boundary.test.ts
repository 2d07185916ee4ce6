import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'testing' ? [] : sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** `file: line` of each line of the files under `dirs` that matches `pattern`. */
function lines(dirs: string[], pattern: RegExp, allowed: (file: string) => boolean = () => false) {
  return dirs.flatMap((d) => sources(join(SRC, d)))
    .filter((f) => !allowed(relative(SRC, f)))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').flatMap((l, i) => (pattern.test(l) ? [`${relative(SRC, f)}:${i + 1}`] : [])));
}

describe('disks and programs go through the engine and the host', () => {
  it('the modules and the seed never run qemu-img nor build a disk path themselves: they ask the engine (ctx.engine.disks)', () => {
    expect(lines(['modules', 'seed'], /engine\/disks'|['"]qemu-img['"]|engine\.dirs\b/)).toEqual([]);
  });

  it('programs start only in the host layer, and inside the engine (the QEMU driver and the guest image build)', () => {
    const allowed = (f: string) => f.startsWith('host/') || f.startsWith('engine/qemu/') || f === 'engine/guest-image.ts';
    expect(lines(['.'], /from 'node:child_process'/, allowed)).toEqual([]);
  });

  it('the guest network and the VPN take their program runner from the host, not from the engine', () => {
    expect(lines(['network', 'vpn'], /from '\.\.\/engine/)).toEqual([]);
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_BUILD_SCRIPT, ensureDemoGuest } from './guest-image';

describe('ensureDemoGuest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'guest-image-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Stands in for build-demo-guest.sh (the real one is exercised by the driver suite's image cache).
  const fakeScript = join(dir, 'fake-build.sh');
  writeFileSync(fakeScript, [
    '#!/bin/bash', 'set -e', 'OUT=$1', 'echo run >> "$OUT/.runs"', 'echo "[0s] downloading"', 'sleep 0.2',
    'echo disk > "$OUT/demo-disk.qcow2"', 'echo iso > "$OUT/demo.iso"', 'sha256sum < "$0" | cut -c1-16 > "$OUT/demo.stamp"', 'echo "[1s] done"',
  ].join('\n'));

  it('builds once when images are missing, however many callers ask at the same time', async () => {
    const out = join(dir, 'images');
    const lines: string[] = [];
    const [a, b] = await Promise.all([
      ensureDemoGuest(out, (l) => lines.push(l), { scriptPath: fakeScript }),
      ensureDemoGuest(out, undefined, { scriptPath: fakeScript }),
    ]);
    expect(a).toEqual(b);
    expect(a.disk).toBe(join(out, 'demo-disk.qcow2'));
    expect(a.iso).toBe(join(out, 'demo.iso'));
    expect(lines).toEqual(['[0s] downloading', '[1s] done']);
    await ensureDemoGuest(out, undefined, { scriptPath: fakeScript }); // present: no build
    expect(readFileSync(join(out, '.runs'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('builds again when the images were made by another version of the script', async () => {
    const out = join(dir, 'stale');
    await ensureDemoGuest(out, undefined, { scriptPath: fakeScript });
    writeFileSync(join(out, 'demo.stamp'), 'older\n');
    await ensureDemoGuest(out, undefined, { scriptPath: fakeScript });
    expect(readFileSync(join(out, '.runs'), 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('reports the script\'s error output when the build fails', async () => {
    const failing = join(dir, 'failing.sh');
    writeFileSync(failing, '#!/bin/bash\necho "cannot resolve linux-image-amd64" >&2\nexit 3\n');
    await expect(ensureDemoGuest(join(dir, 'never'), undefined, { scriptPath: failing })).rejects.toThrow(
      /exited with 3: cannot resolve linux-image-amd64/,
    );
  });

  it('points at the build script in scripts/guest', () => {
    expect(existsSync(DEFAULT_BUILD_SCRIPT)).toBe(true);
    expect(DEFAULT_BUILD_SCRIPT).toMatch(/scripts\/guest\/build-demo-guest\.sh$/);
  });
});

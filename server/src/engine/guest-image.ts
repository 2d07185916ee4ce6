// The demo guest (13 MB, Debian kernel + busybox) is built from Debian packages on first use by
// scripts/guest/build-demo-guest.sh, never downloaded from elsewhere. One build at a time: a promise
// per directory inside this process, and the script's own flock across processes.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type DemoGuestImages = { disk: string; iso: string; kernel: string; initrd: string };

export const DEFAULT_BUILD_SCRIPT = fileURLToPath(new URL('../../../scripts/guest/build-demo-guest.sh', import.meta.url));

const building = new Map<string, Promise<DemoGuestImages>>();

export function demoGuestPaths(imagesDir: string): DemoGuestImages {
  const dir = resolve(imagesDir);
  return {
    disk: join(dir, 'demo-disk.qcow2'),
    iso: join(dir, 'demo.iso'),
    kernel: join(dir, 'vmlinuz'),
    initrd: join(dir, 'initrd.img'),
  };
}

function present(p: DemoGuestImages): boolean {
  return [p.disk, p.iso].every((f) => existsSync(f) && statSync(f).size > 0);
}

/** Returns the image paths, building them first when missing (~12 s, needs root only to apt-get
 *  missing build tools). `onProgress` gets the script's output lines. */
export function ensureDemoGuest(
  imagesDir: string,
  onProgress?: (line: string) => void,
  opts: { scriptPath?: string } = {},
): Promise<DemoGuestImages> {
  const paths = demoGuestPaths(imagesDir);
  if (present(paths)) return Promise.resolve(paths);
  const key = resolve(imagesDir);
  let job = building.get(key);
  if (!job) {
    job = runBuild(opts.scriptPath ?? DEFAULT_BUILD_SCRIPT, key, onProgress)
      .then(() => {
        if (!present(paths)) throw new Error(`demo guest build finished but ${paths.disk} is missing`);
        return paths;
      })
      .finally(() => building.delete(key));
    building.set(key, job);
  }
  return job;
}

function runBuild(script: string, outDir: string, onProgress?: (line: string) => void): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    mkdirSync(outDir, { recursive: true }); // a throw here rejects the promise
    const child = spawn('bash', [script, outDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l) onProgress?.(l);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000); // keep the tail: that is where the reason is
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (partial) onProgress?.(partial);
      if (code === 0) resolvePromise();
      else reject(new Error(`build-demo-guest.sh exited with ${code}: ${stderr.trim()}`));
    });
  });
}

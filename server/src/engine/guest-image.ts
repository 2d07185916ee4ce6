// The demo guest (13 MB, Debian kernel + busybox) is built from Debian packages on first use by
// scripts/guest/build-demo-guest.sh, never downloaded from elsewhere. One build at a time: a promise
// per directory inside this process, and the script's own flock across processes.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type DemoGuestImages = { disk: string; iso: string; kernel: string; initrd: string };

export const DEFAULT_BUILD_SCRIPT = fileURLToPath(new URL('../../../scripts/guest/build-demo-guest.sh', import.meta.url));
const RDP_ROOT_SCRIPT = fileURLToPath(new URL('../../../scripts/guest/rdp-root.sh', import.meta.url));

export type GuestVariant = 'demo' | 'rdp';

/** The stamp the build script writes beside a variant's outputs: a hash of the scripts that make it
 *  (as `cat scripts | sha256sum`), so that images made by an older script are made again. */
export function guestStamp(variant: GuestVariant, scriptPath = DEFAULT_BUILD_SCRIPT): string {
  const h = createHash('sha256').update(readFileSync(scriptPath));
  if (variant === 'rdp') h.update(readFileSync(RDP_ROOT_SCRIPT));
  return h.digest('hex').slice(0, 16);
}

function stampOk(dir: string, variant: GuestVariant, scriptPath?: string): boolean {
  try {
    return readFileSync(join(dir, `${variant}.stamp`), 'utf8').trim() === guestStamp(variant, scriptPath);
  } catch {
    return false;
  }
}

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

const nonEmpty = (f: string) => existsSync(f) && statSync(f).size > 0;

function present(p: DemoGuestImages, scriptPath?: string): boolean {
  return [p.disk, p.iso].every(nonEmpty) && stampOk(dirname(p.disk), 'demo', scriptPath);
}

/** Returns the image paths, building them first when missing (~12 s, needs root only to apt-get
 *  missing build tools). `onProgress` gets the script's output lines. */
export function ensureDemoGuest(
  imagesDir: string,
  onProgress?: (line: string) => void,
  opts: { scriptPath?: string } = {},
): Promise<DemoGuestImages> {
  const paths = demoGuestPaths(imagesDir);
  if (present(paths, opts.scriptPath)) return Promise.resolve(paths);
  const key = `demo:${resolve(imagesDir)}`;
  let job = building.get(key);
  if (!job) {
    job = runBuild(opts.scriptPath ?? DEFAULT_BUILD_SCRIPT, resolve(imagesDir), onProgress)
      .then(() => {
        if (!present(paths, opts.scriptPath)) throw new Error(`demo guest build finished but ${paths.disk} is missing`);
        return paths;
      })
      .finally(() => building.delete(key));
    building.set(key, job);
  }
  return job;
}

const buildingRdp = new Map<string, Promise<{ disk: string }>>();

/**
 * The "Debian desktop (RDP)" guest (xrdp + Xvnc + xterm on the demo guest's kernel and busybox,
 * about 27 MB), built from this machine's Debian packages on first use and cached beside the demo
 * guest (`rdp-disk.qcow2`). About a minute to build on 2 cores.
 */
export function ensureRdpGuest(imagesDir: string, onProgress?: (line: string) => void): Promise<{ disk: string }> {
  const dir = resolve(imagesDir);
  const disk = join(dir, 'rdp-disk.qcow2');
  if (nonEmpty(disk) && stampOk(dir, 'rdp')) return Promise.resolve({ disk });
  let job = buildingRdp.get(dir);
  if (!job) {
    job = runBuild(DEFAULT_BUILD_SCRIPT, dir, onProgress, { GUEST_VARIANT: 'rdp' })
      .then(() => {
        if (!nonEmpty(disk)) throw new Error(`RDP guest build finished but ${disk} is missing`);
        return { disk };
      })
      .finally(() => buildingRdp.delete(dir));
    buildingRdp.set(dir, job);
  }
  return job;
}

function runBuild(script: string, outDir: string, onProgress?: (line: string) => void, env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    mkdirSync(outDir, { recursive: true }); // a throw here rejects the promise
    const child = spawn('bash', [script, outDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
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

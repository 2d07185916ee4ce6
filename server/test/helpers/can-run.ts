// What a test needs of this machine, said as a reason when it is missing. A test that cannot run
// here is skipped with its reason in its title ("[skipped: …]"), which `npm test` prints; the
// README lists which tests may skip and where. Programs are installed by `npm test` itself, so
// there only root (or CAP_NET_ADMIN) can be missing.
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { hasNetAdmin } from '../../src/network/guest-network';

/** Why a test cannot run on this machine; undefined when it can. */
export type Missing = string | undefined;

const onPath = (name: string) => [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/sbin', '/bin', '/sbin'].some((d) => d && existsSync(`${d}/${name}`));

/** The first of the reasons, if any. */
export const firstMissing = (...reasons: Missing[]): Missing => reasons.find(Boolean);

export const missingPrograms = (...names: string[]): Missing => {
  const missing = names.filter((n) => !onPath(n));
  return missing.length > 0 ? `needs ${missing.join(', ')} (not installed)` : undefined;
};

export const missingFile = (path: string, what: string): Missing => (existsSync(path) ? undefined : `needs ${what} (${path})`);

export const missingRoot = (): Missing => (process.getuid?.() === 0 ? undefined : 'needs root (it adds users and network namespaces)');

export const missingNetAdmin = (): Missing =>
  process.platform !== 'linux' ? 'needs Linux (network namespaces)' : hasNetAdmin() ? undefined : 'needs root or CAP_NET_ADMIN (network namespaces)';

type Body = () => unknown;

/** `describe` when nothing is missing; otherwise skipped, its title saying why. */
export const describeIf = (missing: Missing) => (title: string, fn: () => void) =>
  missing ? describe.skip(`${title} [skipped: ${missing}]`, fn) : describe(title, fn);

/** `it` when nothing is missing; otherwise skipped, its title saying why. */
export const itIf = (missing: Missing) => (title: string, fn: Body, timeout?: number) =>
  missing ? it.skip(`${title} [skipped: ${missing}]`, fn as () => void) : it(title, fn as () => void, timeout);

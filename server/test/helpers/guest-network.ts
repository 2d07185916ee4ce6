// Guest networks for tests: each test server gets its own namespace and a free small range, so
// suites run side by side and never touch a network they did not make.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import type { EngineNetworkOptions } from '../../src/engine';
import { overlaps, parseCidr, routeDestinations } from '../../src/network/plan';
import { registerNamespace } from '../../../scripts/lib/test-run.mjs';
import { firstMissing, missingNetAdmin, missingPrograms, type Missing } from './can-run';

/** What this machine lacks for the guest-network tests (root or CAP_NET_ADMIN, ip, dnsmasq), if anything. */
export const guestNetworkMissing = (): Missing => firstMissing(missingNetAdmin(), missingPrograms('ip', 'dnsmasq'));

/** A /24 under 10.0.0.0/8 that no route of this machine overlaps (random: parallel suites do not meet). */
export function freeGuestSubnet(): string {
  const routes = routeDestinations(execFileSync('ip', ['-4', '-o', 'route', 'show', 'table', 'all'], { encoding: 'utf8' }));
  for (let i = 0; i < 1000; i++) {
    const cidr = `10.${randomInt(100, 250)}.${randomInt(0, 256)}.0/24`;
    const net = parseCidr(cidr)!;
    if (!routes.some((r) => overlaps(r, net))) return cidr;
  }
  throw new Error('no free /24 under 10.100.0.0-10.249.255.255');
}

/** The options of a test server's own guest network: its names carry `guest-net` / `gnet`. */
export function testNetworkOptions(): EngineNetworkOptions {
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
  for (;;) {
    const tag = randomBytes(2).toString('hex').slice(0, 2);
    const linkPrefix = `gnet${tag}`;
    if (links.includes(`: ${linkPrefix}`)) continue;
    const namespace = `guest-net-${randomBytes(4).toString('hex')}`;
    registerNamespace(namespace); // removed by the server's close; else by the run's final check
    return { cidr: freeGuestSubnet(), namespace, linkPrefix };
  }
}

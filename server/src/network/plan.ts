// The guest network's plan: names and addresses derived from the configuration. Pure, unit-tested.
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';

/** Linux interface names hold at most 15 characters. */
export const MAX_LINK_NAME = 15;

export type Ipv4Net = { address: number; prefix: number };

export function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

export const formatIpv4 = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

const maskOf = (prefix: number) => (prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0);

/** `10.2.0.0/16` → network address and prefix; null when not an IPv4 CIDR (host bits are cleared). */
export function parseCidr(text: string): Ipv4Net | null {
  const [addr, bits, ...rest] = text.trim().split('/');
  if (rest.length || addr === undefined || bits === undefined || !/^\d{1,2}$/.test(bits)) return null;
  const prefix = Number(bits);
  const address = parseIpv4(addr);
  if (address === null || prefix > 32) return null;
  return { address: (address & maskOf(prefix)) >>> 0, prefix };
}

export const formatCidr = (n: Ipv4Net) => `${formatIpv4(n.address)}/${n.prefix}`;

export function overlaps(a: Ipv4Net, b: Ipv4Net): boolean {
  const prefix = Math.min(a.prefix, b.prefix);
  const m = maskOf(prefix);
  return ((a.address & m) >>> 0) === ((b.address & m) >>> 0);
}

export type NetworkPlan = {
  subnet: Ipv4Net;
  /** the bridge's address inside the namespace: the guests' DHCP server and default gateway */
  gateway: string;
  /** the server's end of the veth pair, in the root namespace: where the server reaches guests from */
  host: string;
  netmask: string;
  dhcpFirst: string;
  dhcpLast: string;
};

/** Smallest range that leaves room for guests: /28 gives 16 addresses, 3 reserved, 12 leases. */
export const MAX_PREFIX = 28;

/**
 * Addresses of the network: .1 the bridge (gateway and DHCP server), .2 the server's veth, the
 * leases from the first quarter's end (at most .16) up to the last address before broadcast.
 */
export function planNetwork(cidr: string): NetworkPlan {
  const subnet = parseCidr(cidr);
  if (!subnet) throw new Error(`GUEST_NETWORK must be an IPv4 range like 10.2.0.0/16, not ${JSON.stringify(cidr)}`);
  if (subnet.prefix > MAX_PREFIX || subnet.prefix < 8) throw new Error(`GUEST_NETWORK must be between /8 and /${MAX_PREFIX} (${cidr})`);
  const size = 2 ** (32 - subnet.prefix);
  const base = subnet.address;
  return {
    subnet,
    gateway: formatIpv4(base + 1),
    host: formatIpv4(base + 2),
    netmask: formatIpv4(maskOf(subnet.prefix)),
    dhcpFirst: formatIpv4(base + Math.min(16, size / 4)),
    dhcpLast: formatIpv4(base + size - 2),
  };
}

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

export type NetworkNames = {
  namespace: string;
  /** the server's end of the veth pair (root namespace) */
  hostLink: string;
  /** prefix of the desktops' TAPs (root namespace until QEMU opened them) */
  tapPrefix: string;
  /** the VXLAN device to the remote hypervisors (made in the root namespace, then moved onto the bridge) */
  tunnelLink: string;
};

export const LINK_PREFIX_RE = /^[a-z][a-z0-9]{1,5}$/;
export const NAMESPACE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/**
 * Names of a server's namespace and links. By default both derive from DATA_DIR, so two servers
 * on one machine never collide and a server finds what an earlier run of the same directory left.
 * The link prefix is at most 6 characters: a TAP is prefix + `t` + 8 hex digits (15).
 */
export function networkNames(dataDir: string, opts: { namespace?: string; linkPrefix?: string } = {}): NetworkNames {
  const h = hashOf(resolve(dataDir));
  const namespace = opts.namespace || `vdi-${h.slice(0, 8)}`;
  const prefix = opts.linkPrefix || `v${h.slice(0, 5)}`;
  if (!NAMESPACE_RE.test(namespace)) throw new Error(`bad network namespace name ${JSON.stringify(namespace)}`);
  if (!LINK_PREFIX_RE.test(prefix)) throw new Error(`the link prefix must be 2-6 lower-case letters and digits, not ${JSON.stringify(prefix)}`);
  return { namespace, hostLink: `${prefix}h`, tapPrefix: `${prefix}t`, tunnelLink: `${prefix}x` };
}

/** A desktop's TAP for its `index`th private NIC: stable (a restarted server finds it again), 15 characters at most. */
export function tapName(names: NetworkNames, machineId: string, index = 0): string {
  const name = `${names.tapPrefix}${hashOf(`${machineId}#${index}`).slice(0, MAX_LINK_NAME - names.tapPrefix.length)}`;
  return name;
}

/** A stable, locally administered unicast MAC for a desktop's interface (when its record has none). */
export function stableMac(machineId: string, interfaceId: string): string {
  const h = hashOf(`${machineId}/${interfaceId}`);
  return `52:54:00:${h.slice(0, 2)}:${h.slice(2, 4)}:${h.slice(4, 6)}`;
}

/** IPv4 destinations of `ip -4 -o route show table all` lines (default routes and local/broadcast entries skipped). */
export function routeDestinations(text: string): Ipv4Net[] {
  const out: Ipv4Net[] = [];
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/);
    let dest = words[0];
    if (!dest) continue;
    if (['local', 'broadcast', 'unreachable', 'blackhole', 'prohibit', 'throw', 'unicast'].includes(dest)) {
      if (dest === 'local' || dest === 'broadcast') continue;
      dest = words[1];
    }
    if (!dest || dest === 'default') continue;
    const net = parseCidr(dest.includes('/') ? dest : `${dest}/32`);
    if (net) out.push(net);
  }
  return out;
}

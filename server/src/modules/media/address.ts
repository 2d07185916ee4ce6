import { isIPv4, isIPv6 } from 'node:net';

/**
 * Where an IP address points, for the media downloader's server-side request forgery guard:
 * only `public` addresses may be fetched (unless the operator allows private ones).
 */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared' // carrier-grade NAT, 100.64.0.0/10
  | 'multicast'
  | 'documentation'
  | 'reserved'
  | 'invalid';

type V4Range = [base: number, bits: number, cls: AddressClass];

const v4 = (s: string): number => s.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);

const V4_RANGES: V4Range[] = (
  [
    ['0.0.0.0', 8, 'unspecified'], // "this network"
    ['10.0.0.0', 8, 'private'],
    ['100.64.0.0', 10, 'shared'],
    ['127.0.0.0', 8, 'loopback'],
    ['169.254.0.0', 16, 'link-local'],
    ['172.16.0.0', 12, 'private'],
    ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
    ['192.0.2.0', 24, 'documentation'],
    ['192.88.99.0', 24, 'reserved'], // 6to4 relay anycast
    ['192.168.0.0', 16, 'private'],
    ['198.18.0.0', 15, 'reserved'], // benchmarking
    ['198.51.100.0', 24, 'documentation'],
    ['203.0.113.0', 24, 'documentation'],
    ['224.0.0.0', 4, 'multicast'],
    ['240.0.0.0', 4, 'reserved'], // includes 255.255.255.255
  ] as const
).map(([base, bits, cls]) => [v4(base), bits, cls]);

function parseV4(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return v4(address);
}

export function classifyV4(address: string): AddressClass {
  const n = parseV4(address);
  if (n === null) return 'invalid';
  for (const [base, bits, cls] of V4_RANGES) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return cls;
  }
  return 'public';
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, embedded dotted IPv4 expanded). */
export function parseV6(address: string): number[] | null {
  let a = address.trim().toLowerCase();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  if (!isIPv6(a)) return null;
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two groups.
  const lastColon = a.lastIndexOf(':');
  const tail = a.slice(lastColon + 1);
  if (tail.includes('.')) {
    const n = parseV4(tail);
    if (n === null) return null;
    a = `${a.slice(0, lastColon + 1)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head, rest] = a.includes('::') ? (a.split('::') as [string, string]) : [a, undefined];
  const h = head ? head.split(':') : [];
  const r = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = rest === undefined ? 0 : 8 - h.length - r.length;
  const groups = [...h, ...Array<string>(missing).fill('0'), ...r].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const v4FromGroups = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

export function classifyV6(address: string): AddressClass {
  const g = parseV6(address);
  if (!g) return 'invalid';
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d): what the embedded IPv4 address is.
  if (zeros(0, 5) && g[5] === 0xffff) return classifyV4(v4FromGroups(g[6]!, g[7]!));
  // NAT64 well-known prefix 64:ff9b::/96: the embedded IPv4 address decides; 64:ff9b:1::/48 is local use.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return classifyV4(v4FromGroups(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'private';
  // IPv4-compatible (::a.b.c.d, deprecated) and anything else in ::/8.
  if (g[0]! < 0x0100) return 'reserved';
  if (g[0] === 0x100 && zeros(1, 4)) return 'reserved'; // discard-only 100::/64
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'private'; // site-local (deprecated)
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'documentation';
  if (g[0] === 0x3fff && g[1]! < 0x1000) return 'documentation'; // 3fff::/20
  // 6to4 (2002::/16) carries an IPv4 address in bits 16–48.
  if (g[0] === 0x2002) return classifyV4(v4FromGroups(g[1]!, g[2]!));
  // IETF protocol assignments 2001::/23 (Teredo, ORCHID, benchmarking…): tunnels and special uses.
  if (g[0] === 0x2001 && g[1]! < 0x0200) return 'reserved';
  // Only global unicast 2000::/3 is public.
  if ((g[0]! & 0xe000) !== 0x2000) return 'reserved';
  return 'public';
}

export function classifyAddress(address: string): AddressClass {
  if (isIPv4(address)) return classifyV4(address);
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv6(bare)) return classifyV6(bare);
  return 'invalid';
}

export const isPublicAddress = (address: string) => classifyAddress(address) === 'public';

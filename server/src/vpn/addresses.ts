// Addresses of the users' VPN range: .1 is the endpoint, users get the lowest free address from .2.

export function ipv4ToInt(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

export const intToIpv4 = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

export type UsersRange = { base: number; prefix: number; endpoint: string; cidr: string };

export function usersRange(cidr: string): UsersRange {
  const [addr, bits] = cidr.split('/');
  const a = ipv4ToInt(addr ?? '');
  const prefix = Number(bits);
  if (a === null || !Number.isInteger(prefix) || prefix < 8 || prefix > 30) throw new Error(`bad VPN users range ${cidr}`);
  const mask = (0xffffffff << (32 - prefix)) >>> 0;
  const base = (a & mask) >>> 0;
  return { base, prefix, endpoint: intToIpv4(base + 1), cidr: `${intToIpv4(base)}/${prefix}` };
}

/** The lowest address of the range not in `taken` (the endpoint's and the broadcast excluded); null when full. */
export function freeAddress(range: UsersRange, taken: Iterable<string>): string | null {
  const used = new Set<number>();
  for (const t of taken) {
    const n = ipv4ToInt(t);
    if (n !== null) used.add(n);
  }
  const last = range.base + 2 ** (32 - range.prefix) - 2;
  for (let n = range.base + 2; n <= last; n++) if (!used.has(n)) return intToIpv4(n);
  return null;
}

/** Do two CIDRs overlap? */
export function rangesOverlap(a: string, b: string): boolean {
  const ra = usersRange(a);
  const rb = usersRange(b);
  const p = Math.min(ra.prefix, rb.prefix);
  const m = (0xffffffff << (32 - p)) >>> 0;
  return ((ra.base & m) >>> 0) === ((rb.base & m) >>> 0);
}

// Addresses of the users' VPN range: .1 is the endpoint, users get the lowest free address from .2.
import { formatCidr, formatIpv4, overlaps, parseCidr, parseIpv4 } from '../network/plan';

export type UsersRange = { base: number; prefix: number; endpoint: string; cidr: string };

export function usersRange(cidr: string): UsersRange {
  const net = parseCidr(cidr);
  if (!net || net.prefix < 8 || net.prefix > 30) throw new Error(`bad VPN users range ${cidr}`);
  return { base: net.address, prefix: net.prefix, endpoint: formatIpv4(net.address + 1), cidr: formatCidr(net) };
}

/** The lowest address of the range not in `taken` (the endpoint's and the broadcast excluded); null when full. */
export function freeAddress(range: UsersRange, taken: Iterable<string>): string | null {
  const used = new Set<number>();
  for (const t of taken) {
    const n = parseIpv4(t);
    if (n !== null) used.add(n);
  }
  const last = range.base + 2 ** (32 - range.prefix) - 2;
  for (let n = range.base + 2; n <= last; n++) if (!used.has(n)) return formatIpv4(n);
  return null;
}

/** Do two CIDRs overlap? */
export function rangesOverlap(a: string, b: string): boolean {
  const na = parseCidr(a);
  const nb = parseCidr(b);
  return !!na && !!nb && overlaps(na, nb);
}

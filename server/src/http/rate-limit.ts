import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client as limits count it: an IPv4 address (also when IPv4-mapped), or the /64 of an IPv6
 * one — a single host usually holds a whole /64, so counting its addresses one by one would give it
 * 2^64 allowances.
 */
export function clientKey(ip: string): string {
  const mapped = ip.toLowerCase().startsWith('::ffff:') ? ip.slice(7) : ip;
  if (isIPv4(mapped)) return mapped;
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return ip;
  const [head, tail] = address.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  // An embedded IPv4 at the end takes two groups.
  const backGroups = back.length + (back.at(-1)?.includes('.') ? 1 : 0);
  const groups = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - backGroups).fill('0'), ...back];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

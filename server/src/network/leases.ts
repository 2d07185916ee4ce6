// dnsmasq's lease file: one lease a line, `<expiry epoch s> <mac> <ip> <hostname|*> <client-id|*>`. Pure.

export type Lease = { expiresAt: number; mac: string; ip: string; hostname: string | null };

const MAC_RE = /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/;
const IPV4_RE = /^(\d{1,3}\.){3}\d{1,3}$/;

export function parseLeases(text: string): Lease[] {
  const out: Lease[] = [];
  for (const line of text.split('\n')) {
    const [expiry, mac, ip, hostname] = line.trim().split(/\s+/);
    if (!expiry || !mac || !ip || !/^\d+$/.test(expiry)) continue;
    const m = mac.toLowerCase();
    if (!MAC_RE.test(m) || !IPV4_RE.test(ip)) continue;
    out.push({ expiresAt: Number(expiry), mac: m, ip, hostname: hostname && hostname !== '*' ? hostname : null });
  }
  return out;
}

/**
 * The address leased to `mac`, if the lease was granted at or after `since` (epoch seconds): a
 * lease from the desktop's earlier run must not pass for this one. dnsmasq writes the expiry,
 * so the grant time is the expiry minus the lease time it was configured with.
 */
export function leasedAddress(leases: Lease[], mac: string, opts: { leaseSeconds: number; since?: number; now?: number }): string | null {
  const now = opts.now ?? Date.now() / 1000;
  const m = mac.toLowerCase();
  let best: Lease | null = null;
  for (const l of leases) {
    if (l.mac !== m || l.expiresAt <= now) continue;
    if (opts.since !== undefined && l.expiresAt - opts.leaseSeconds < Math.floor(opts.since)) continue;
    if (!best || l.expiresAt > best.expiresAt) best = l;
  }
  return best?.ip ?? null;
}

// The VPN's firewall inside the guest network's namespace (nftables, one table replaced atomically):
// a user's tunnel reaches only the addresses of that user's own running desktops; never the
// namespace itself (its gateway, DHCP), the server's end of the veth, or other guests. Guests
// answer; they cannot open connections into a user's tunnel.
//
// What leaves the tunnel towards a guest carries the namespace's own address on the guests' segment
// (masquerade): a guest answers it on its own link, whatever its default route (a desktop with a
// user-mode NAT NIC besides the private one routes everything else out of that one).

export const VPN_TABLE = 'vdi_vpn';

export type ReachPair = { user: string; guest: string };

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

export function vpnRuleset(ifname: string, pairs: ReachPair[]): string {
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(ifname)) throw new Error(`bad interface name ${JSON.stringify(ifname)}`);
  const elements = [...new Set(pairs.filter((p) => IPV4.test(p.user) && IPV4.test(p.guest)).map((p) => `${p.user} . ${p.guest}`))].sort();
  const set = elements.length ? `\n    elements = { ${elements.join(', ')} }` : '';
  return `table inet ${VPN_TABLE}
delete table inet ${VPN_TABLE}
table inet ${VPN_TABLE} {
  set reach {
    type ipv4_addr . ipv4_addr${set}
  }
  chain input {
    type filter hook input priority filter; policy accept;
    iifname "${ifname}" drop
  }
  chain forward {
    type filter hook forward priority filter; policy accept;
    iifname "${ifname}" ip saddr . ip daddr @reach accept
    iifname "${ifname}" drop
    oifname "${ifname}" ct state established,related accept
    oifname "${ifname}" drop
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    iifname "${ifname}" masquerade
  }
}
`;
}

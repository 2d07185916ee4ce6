// The guest network across hosts: every remote hypervisor has a bridge of a fixed name with one
// VXLAN port (unicast, to the server), and the server's guest bridge one VXLAN device whose
// forwarding table floods to every connected host. The server's dnsmasq stays the one DHCP
// server: a guest on any host gets its lease (and so its address) from it. What a hypervisor runs
// once is `hostRecipe` (README: "A hypervisor's guest network"). Pure: names, numbers, the recipe.

/** The bridge a hypervisor's guests on the guest network are plugged into (libvirt `<source bridge>`). */
export const GUEST_BRIDGE = 'vdi-guests';
/** The hypervisor's VXLAN port on that bridge. */
export const GUEST_BRIDGE_VXLAN = 'vdi-guests-vx';
/** VXLAN's IANA port, on the server and on every host. */
export const VXLAN_PORT = 4789;
/** The VXLAN network id when GUEST_NETWORK_VNI is not set. */
export const DEFAULT_VNI = 4236;
/** A guest NIC's MTU on the tunnelled network: a 1500-byte underlay less VXLAN's 50 bytes. */
export const TUNNEL_MTU = 1450;

export const validVni = (n: number) => Number.isInteger(n) && n >= 1 && n <= 0xffffff;

/** The commands that prepare a hypervisor (as root, once per boot): its bridge and its VXLAN port to the server. */
export function hostRecipe(opts: { vni: number; server: string }): string[] {
  return [
    `ip link add ${GUEST_BRIDGE} type bridge`,
    `ip link set ${GUEST_BRIDGE} up`,
    `ip link add ${GUEST_BRIDGE_VXLAN} type vxlan id ${opts.vni} dstport ${VXLAN_PORT} remote ${opts.server} nolearning`,
    `ip link set ${GUEST_BRIDGE_VXLAN} mtu ${TUNNEL_MTU} master ${GUEST_BRIDGE} up`,
  ];
}

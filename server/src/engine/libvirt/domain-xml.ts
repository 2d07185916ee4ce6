// MachineSpec → libvirt domain XML, and the parts of a live domain's XML the driver reads back.
// Pure: no I/O, unit-tested. The mapping follows ../README.md ("A libvirt driver maps onto the
// same interface") and the QEMU driver's measured choices (q35, virtio by default, AHCI for sata/ide).
import { EngineError, type MachineSpec } from '../driver';
import { bootIndexes, credentialsBlob, CREDENTIALS_FW_CFG, validateSpec, videoModel } from '../qemu/args';
import { GUEST_BRIDGE, TUNNEL_MTU } from '../../network/tunnel';

/** Our metadata element's namespace: `list()` only returns domains that carry it. */
export const METADATA_NS = 'https://vdi-portal.org/ns/machine/1';

export type DomainXmlContext = {
  /** `kvm` or `qemu` (TCG), from the host's domain capabilities */
  domainType: 'kvm' | 'qemu';
  /** the host's address its VNC and SPICE servers listen on (what the proxies connect to) */
  listen: string;
  /** initial graphics passwords (random): nobody gets in until setViewerPassword */
  vncPassword: string;
  spicePassword: string;
  startedAt: Date;
};

export const xmlEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

const VIDEO: Record<ReturnType<typeof videoModel>, string> = { std: 'vga', qxl: 'qxl', virtio: 'virtio', none: 'none' };

export function buildDomainXml(spec: MachineSpec, ctx: DomainXmlContext): string {
  validateSpec(spec);
  const a = xmlEscape;
  const boot = bootIndexes(spec);
  const bootEl = (n: number | undefined) => (n === undefined ? '' : `<boot order='${n}'/>`);
  const devices: string[] = [];
  let virtio = 0;
  let sata = 0;
  const letter = (i: number) => String.fromCharCode(97 + i);
  spec.disks.forEach((d, i) => {
    // q35 has no IDE controller: `ide` disks go on its AHCI ports, as in the QEMU driver.
    const ahci = d.bus === 'ide' || d.bus === 'sata';
    const target = ahci ? `<target dev='sd${letter(sata++)}' bus='sata'/>` : `<target dev='vd${letter(virtio++)}' bus='virtio'/>`;
    devices.push(
      `<disk type='file' device='disk'><driver name='qemu' type='${d.format ?? 'qcow2'}' discard='unmap'/>` +
        `<source file='${a(d.path)}'/>${target}${bootEl(boot.disk[i])}</disk>`,
    );
  });
  spec.isos.forEach((iso, i) => {
    devices.push(
      `<disk type='file' device='cdrom'><driver name='qemu' type='raw'/><source file='${a(iso.path)}'/>` +
        `<target dev='sd${letter(sata++)}' bus='sata'/><readonly/>${bootEl(boot.iso[i])}</disk>`,
    );
  });
  spec.nics.forEach((nic, i) => {
    const mac = `<mac address='${nic.mac.toLowerCase()}'/>`;
    const model = `<model type='${nic.model === 'e1000' ? 'e1000' : 'virtio'}'/>`;
    if (nic.network === 'private') {
      // The host's bridge of the guest network (a VXLAN port to the server's, see network/tunnel.ts):
      // the server's DHCP gives the address. The MTU leaves room for VXLAN's 50 bytes (virtio tells the guest).
      devices.push(`<interface type='bridge'>${mac}<source bridge='${GUEST_BRIDGE}'/>${model}<mtu size='${TUNNEL_MTU}'/>${bootEl(boot.network[i])}</interface>`);
    } else {
      // user-mode networking (NAT, nobody reaches in), like the QEMU driver's default NIC
      devices.push(`<interface type='user'>${mac}${model}${bootEl(boot.network[i])}</interface>`);
    }
  });
  const listen = `<listen type='address' address='${a(ctx.listen)}'/>`;
  if (spec.graphics.vnc) {
    devices.push(`<graphics type='vnc' autoport='yes' listen='${a(ctx.listen)}' passwd='${a(ctx.vncPassword)}'>${listen}</graphics>`);
  }
  if (spec.graphics.spice) {
    devices.push(`<graphics type='spice' autoport='yes' listen='${a(ctx.listen)}' passwd='${a(ctx.spicePassword)}'>${listen}</graphics>`);
    devices.push(`<channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>`);
  } else if (spec.graphics.vnc) {
    // VNC alone: QEMU is the agent's peer (qemu-vdagent, libvirt 8.4+), carrying the clipboard between the
    // guest's spice-vdagent and the VNC server; the pointer stays with the tablet (mouse mode 'server').
    devices.push(
      `<channel type='qemu-vdagent'><source><clipboard copypaste='yes'/><mouse mode='server'/></source>` +
        `<target type='virtio' name='com.redhat.spice.0'/></channel>`,
    );
  }
  // QEMU's guest agent (files in and out of the guest): libvirt makes the virtio-serial bus and the socket
  devices.push(`<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>`);
  devices.push(`<video><model type='${VIDEO[videoModel(spec)]}'/></video>`);
  // the first serial port, read through virDomainOpenConsole (works for a remote host)
  devices.push(`<serial type='pty'><target port='0'/></serial><console type='pty'><target type='serial' port='0'/></console>`);
  devices.push(`<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>`);
  devices.push(`<panic model='isa'/>`, `<memballoon model='none'/>`);
  // The guest credentials as the QEMU driver hands them over (the same fw_cfg item and content),
  // inline: libvirt passes them as QEMU's `-fw_cfg …,string=` (no file on the host). This XML then
  // holds a secret: never logged (docs/decisions/0010-guest-network-across-hosts.md).
  const sysinfo = spec.guestCredentials
    ? `<sysinfo type='fwcfg'><entry name='${CREDENTIALS_FW_CFG}'>${a(credentialsBlob(spec.guestCredentials))}</entry></sysinfo>`
    : '';
  return (
    `<domain type='${ctx.domainType}'>` +
    `<name>${a(spec.id)}</name><title>${a(spec.name)}</title>` +
    `<metadata><vdi:machine xmlns:vdi='${METADATA_NS}' startedAt='${ctx.startedAt.toISOString()}'/></metadata>` +
    `<memory unit='MiB'>${spec.memoryMb}</memory><vcpu>${spec.vcpus}</vcpu>` +
    sysinfo +
    `<os><type arch='x86_64' machine='q35'>hvm</type></os>` +
    `<features><acpi/><apic/></features><clock offset='utc'/>` +
    `<on_poweroff>destroy</on_poweroff><on_reboot>restart</on_reboot><on_crash>destroy</on_crash>` +
    `<devices>${devices.join('')}</devices></domain>`
  );
}

export type LiveDomain = {
  name: string;
  startedAt?: Date;
  vnc?: { host: string; port: number };
  spice?: { host: string; port: number };
};

const attrs = (tag: string): Record<string, string> =>
  Object.fromEntries([...tag.matchAll(/([\w:]+)=(['"])(.*?)\2/g)].map((m) => [m[1]!, m[3]!]));

/** Reads a live domain's XML (virDomainGetXMLDesc): name, our start time, graphics endpoints.
 *  A graphics server listening on every address is reached at `fallbackHost` (the host's). */
export function parseLiveXml(xml: string, fallbackHost: string): LiveDomain {
  const name = /<name>([^<]*)<\/name>/.exec(xml)?.[1] ?? '';
  const out: LiveDomain = { name: name.replace(/&amp;/g, '&') };
  const meta = /<(?:\w+:)?machine\b[^>]*startedAt=(['"])([^'"]+)\1/.exec(xml);
  if (meta) out.startedAt = new Date(meta[2]!);
  for (const m of xml.matchAll(/<graphics\b[^>]*>/g)) {
    const g = attrs(m[0]);
    const port = Number(g.port);
    if (!(port > 0)) continue;
    const host = !g.listen || g.listen === '0.0.0.0' || g.listen === '::' ? fallbackHost : g.listen;
    if (g.type === 'vnc') out.vnc = { host, port };
    if (g.type === 'spice') out.spice = { host, port };
  }
  return out;
}

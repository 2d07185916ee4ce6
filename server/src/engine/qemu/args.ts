// Builds QEMU's command line from a MachineSpec. Pure: no I/O, unit-tested.
// Choices measured on QEMU 7.2 under TCG with the demo guest (see README.md): q35 and pc boot
// equally fast; virtio disk + NIC are the fastest buses (8–10 s to READY vs 13 s on IDE/e1000).
import { accelArg, type Accel } from '../accel';
import { EngineError, type MachineSpec } from '../driver';
import { MACHINE_ID_RE, type RunPaths } from './run-dir';

export type QemuArgsContext = {
  paths: RunPaths;
  accel: Accel;
  tcgTbSizeMb: number;
  /** when SPICE is on: where it listens, and the file QEMU reads its initial password from */
  spice?: { host: string; port: number; secretFile: string };
  /** seccomp filter (QEMU's -sandbox); on unless the host's QEMU lacks it */
  sandbox: boolean;
  /** the TAP of each `private` NIC, by NIC index (made by the guest network before QEMU starts) */
  taps?: (string | undefined)[];
  /** the file (0600, deleted once QEMU is up) QEMU reads the guest credentials from */
  credentialsFile?: string;
  /** the file (0600, deleted once QEMU is up) QEMU reads the spec's first VNC password from */
  vncSecretFile?: string;
};

/** fw_cfg item the RDP guest reads its user from (/sys/firmware/qemu_fw_cfg/by_name/…). */
export const CREDENTIALS_FW_CFG = 'opt/org.vdiportal/credentials';

/** The fw_cfg item's content: base64 user name, base64 password, a line each. */
export const credentialsBlob = (c: { username: string; password: string }) =>
  `${Buffer.from(c.username).toString('base64')}\n${Buffer.from(c.password).toString('base64')}\n`;

const MAC_RE = /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i;
/** ports of the AHCI controller built into q35 (ide.0 … ide.5); IDE/SATA disks and CD-ROMs share them */
const AHCI_PORTS = 6;

/** QEMU option values separate keys with commas; a literal comma is written twice. */
export function esc(value: string): string {
  return value.replaceAll(',', ',,');
}

export function validateSpec(spec: MachineSpec): void {
  const bad = (msg: string) => new EngineError('invalid-spec', `machine ${spec.id}: ${msg}`);
  if (!MACHINE_ID_RE.test(spec.id)) throw bad('id must be 1-64 letters, digits, "-", "_" or "."');
  if (!Number.isInteger(spec.memoryMb) || spec.memoryMb < 16) throw bad('memoryMb must be an integer >= 16');
  if (!Number.isInteger(spec.vcpus) || spec.vcpus < 1 || spec.vcpus > 255) throw bad('vcpus must be 1..255');
  for (const d of spec.disks) if (!d.path.startsWith('/')) throw bad(`disk path must be absolute: ${d.path}`);
  for (const i of spec.isos) if (!i.path.startsWith('/')) throw bad(`iso path must be absolute: ${i.path}`);
  for (const n of spec.nics) if (!MAC_RE.test(n.mac)) throw bad(`bad MAC address ${n.mac}`);
  const ahci = spec.disks.filter((d) => d.bus === 'ide' || d.bus === 'sata').length + spec.isos.length;
  if (ahci > AHCI_PORTS) throw bad(`at most ${AHCI_PORTS} IDE/SATA disks and CD-ROMs together`);
  if (new Set(spec.bootOrder).size !== spec.bootOrder.length) throw bad('bootOrder lists a kind twice');
}

export function videoModel(spec: MachineSpec): 'std' | 'qxl' | 'virtio' | 'none' {
  if (spec.video !== 'default') return spec.video;
  return spec.graphics.spice ? 'qxl' : 'std';
}

/** bootindex for each device kind, in bootOrder; devices of unlisted kinds get none. */
export function bootIndexes(spec: MachineSpec): { disk: number[]; iso: number[]; network: number[] } {
  const out = { disk: [] as number[], iso: [] as number[], network: [] as number[] };
  let next = 1;
  for (const kind of spec.bootOrder) {
    const count = kind === 'disk' ? spec.disks.length : kind === 'iso' ? spec.isos.length : spec.nics.length;
    for (let i = 0; i < count; i++) out[kind].push(next++);
  }
  return out;
}

const withBoot = (device: string, index: number | undefined) => (index === undefined ? device : `${device},bootindex=${index}`);

export function buildQemuArgs(spec: MachineSpec, ctx: QemuArgsContext): string[] {
  validateSpec(spec);
  const p = ctx.paths;
  const boot = bootIndexes(spec);
  const args: string[] = [
    // -nodefaults: no implicit NIC, CD-ROM, serial or monitor; everything below is explicit.
    '-nodefaults', '-no-user-config',
    '-name', `${esc(spec.id)},debug-threads=on`,
    '-machine', 'q35',
    '-accel', accelArg(ctx.accel, ctx.tcgTbSizeMb),
    '-m', String(spec.memoryMb),
    '-smp', String(spec.vcpus),
    '-rtc', 'base=utc',
    '-msg', 'timestamp=on',
    '-pidfile', p.pidFile,
    '-qmp', `unix:${esc(p.qmp)},server=on,wait=off`,
    '-serial', `file:${esc(p.serial)}`,
    '-display', 'none',
    '-vga', videoModel(spec),
    // Guest entropy from the host: first-boot SSH host keys must not wait for the guest's pool.
    '-object', 'rng-random,id=rng0,filename=/dev/urandom', '-device', 'virtio-rng-pci,rng=rng0',
    // Lets a panicking guest kernel tell us (GUEST_PANICKED event) instead of hanging silently.
    '-device', 'pvpanic',
  ];
  if (ctx.sandbox) args.push('-sandbox', 'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny');
  if (spec.bootOrder.length > 0) args.push('-boot', 'strict=on');

  let ahciPort = 0;
  spec.disks.forEach((d, i) => {
    const id = `disk${i}`;
    // discard=unmap: guest TRIM frees clusters in the overlay, so thin disks stay thin.
    args.push('-drive', `if=none,id=${id},file=${esc(d.path)},format=${d.format ?? 'qcow2'},discard=unmap`);
    const dev = d.bus === 'ide' || d.bus === 'sata' ? `ide-hd,drive=${id},bus=ide.${ahciPort++}` : `virtio-blk-pci,drive=${id}`;
    args.push('-device', withBoot(dev, boot.disk[i]));
  });
  spec.isos.forEach((iso, i) => {
    const id = `cd${i}`;
    args.push('-drive', `if=none,id=${id},file=${esc(iso.path)},format=raw,media=cdrom,readonly=on`);
    args.push('-device', withBoot(`ide-cd,drive=${id},bus=ide.${ahciPort++}`, boot.iso[i]));
  });
  spec.nics.forEach((nic, i) => {
    const id = `net${i}`;
    if (nic.network === 'private') {
      // A TAP made beforehand (no scripts: QEMU's sandbox forbids spawning, and the server moves it).
      const tap = ctx.taps?.[i];
      if (!tap) throw new EngineError('invalid-spec', `NIC ${nic.id} is on the guest network but has no TAP`);
      args.push('-netdev', `tap,id=${id},ifname=${esc(tap)},script=no,downscript=no`);
    } else {
      // user-mode networking: NAT to the outside, no privileges or bridges needed on the host.
      args.push('-netdev', `user,id=${id}`);
    }
    const model = nic.model === 'e1000' ? 'e1000' : 'virtio-net-pci';
    args.push('-device', withBoot(`${model},netdev=${id},mac=${nic.mac.toLowerCase()}`, boot.network[i]));
  });

  if (spec.guestCredentials) {
    if (!ctx.credentialsFile) throw new EngineError('invalid-spec', 'guest credentials but no file to hand them over');
    args.push('-fw_cfg', `name=${CREDENTIALS_FW_CFG},file=${esc(ctx.credentialsFile)}`);
  }
  // One virtio-serial bus for every agent port (vser0): QEMU's guest agent on org.qemu.guest_agent.0
  // (qga.sock in the run dir: files in and out of the guest), the SPICE agent below.
  args.push('-device', 'virtio-serial-pci,id=vser0');
  args.push('-chardev', `socket,id=qga0,path=${esc(p.qga)},server=on,wait=off`);
  args.push('-device', 'virtserialport,bus=vser0.0,chardev=qga0,name=org.qemu.guest_agent.0');
  if (spec.graphics.vnc) {
    if (ctx.vncSecretFile) {
      // The spec's first password, read from its file (like SPICE's): the first viewer needs no QMP round trip.
      args.push('-object', `secret,id=vnc-pw,file=${esc(ctx.vncSecretFile)}`);
      args.push('-vnc', `unix:${esc(p.vnc)},password-secret=vnc-pw`);
    } else {
      // password=on with no password set yet: nobody gets in until setViewerPassword.
      args.push('-vnc', `unix:${esc(p.vnc)},password=on`);
    }
  }
  if (spec.graphics.spice) {
    if (!ctx.spice) throw new EngineError('invalid-spec', 'SPICE requested but no port was allocated');
    args.push('-object', `secret,id=spice-pw,file=${esc(ctx.spice.secretFile)}`);
    args.push('-spice', `port=${ctx.spice.port},addr=${esc(ctx.spice.host)},password-secret=spice-pw`);
  }
  // The agent's port (com.redhat.spice.0) on the virtio-serial controller above (vser0). With SPICE the agent
  // speaks to the SPICE client (spicevmc: clipboard and resolution follow the viewer window). With VNC
  // alone QEMU itself is the agent's peer (qemu-vdagent): the clipboard goes between the guest's
  // spice-vdagent and QEMU's VNC server (noVNC's cut text); mouse=off leaves the pointer to the tablet.
  if (spec.graphics.spice || spec.graphics.vnc) {
    args.push('-chardev', spec.graphics.spice ? 'spicevmc,id=vdagent,name=vdagent' : 'qemu-vdagent,id=vdagent,name=vdagent,clipboard=on,mouse=off');
    args.push('-device', 'virtserialport,bus=vser0.0,chardev=vdagent,name=com.redhat.spice.0');
  }
  return args;
}

import { describe, expect, it } from 'vitest';
import type { MachineSpec } from '../driver';
import { buildQemuArgs, credentialsBlob, esc, validateSpec, type QemuArgsContext } from './args';
import { runPaths } from './run-dir';

const spec = (over: Partial<MachineSpec> = {}): MachineSpec => ({
  id: 'd1', name: 'Desk, one', memoryMb: 256, vcpus: 2,
  disks: [{ path: '/s/d1.qcow2', bus: 'default' }], isos: [], bootOrder: ['disk'],
  nics: [{ id: 'default', mac: '52:54:00:AA:00:01' }], video: 'default', graphics: { vnc: true, spice: false },
  ...over,
});
const ctx = (over: Partial<QemuArgsContext> = {}): QemuArgsContext => ({
  paths: runPaths('/run/vdi', 'd1'), accel: 'tcg', tcgTbSizeMb: 64, sandbox: true, ...over,
});
/** values following each occurrence of a flag */
const values = (args: string[], flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));

describe('buildQemuArgs', () => {
  it('builds a q35 TCG machine with QMP, serial file, VNC on a unix socket, no defaults', () => {
    const args = buildQemuArgs(spec(), ctx());
    expect(args).toContain('-nodefaults');
    expect(values(args, '-machine')).toEqual(['q35']);
    expect(values(args, '-accel')).toEqual(['tcg,tb-size=64']);
    expect(values(args, '-m')).toEqual(['256']);
    expect(values(args, '-smp')).toEqual(['2']);
    expect(values(args, '-qmp')).toEqual(['unix:/run/vdi/d1/qmp.sock,server=on,wait=off']);
    expect(values(args, '-serial')).toEqual(['file:/run/vdi/d1/serial.log']);
    expect(values(args, '-vnc')).toEqual(['unix:/run/vdi/d1/vnc.sock,password=on']);
    expect(values(args, '-display')).toEqual(['none']);
    expect(values(args, '-vga')).toEqual(['std']);
    expect(values(args, '-pidfile')).toEqual(['/run/vdi/d1/qemu.pid']);
    expect(args).not.toContain('-spice');
    expect(args.join(' ')).not.toMatch(/-cpu host/);
  });

  it('takes the first VNC password from its file (a secret object), never from argv', () => {
    const args = buildQemuArgs({ ...spec(), vncPassword: 'pw123456' }, ctx({ vncSecretFile: '/run/vdi/d1/vnc.secret' }));
    expect(values(args, '-vnc')).toEqual(['unix:/run/vdi/d1/vnc.sock,password-secret=vnc-pw']);
    expect(values(args, '-object')).toContain('secret,id=vnc-pw,file=/run/vdi/d1/vnc.secret');
    expect(args.join(' ')).not.toContain('pw123456');
  });

  it('KVM needs no TCG options', () => {
    expect(values(buildQemuArgs(spec(), ctx({ accel: 'kvm' })), '-accel')).toEqual(['kvm']);
  });

  it('puts default/virtio disks on virtio-blk and IDE/SATA disks and CD-ROMs on the AHCI ports', () => {
    const args = buildQemuArgs(spec({
      disks: [{ path: '/s/a.qcow2', bus: 'virtio' }, { path: '/s/b.qcow2', bus: 'sata' }, { path: '/s/c.raw', bus: 'ide', format: 'raw' }],
      isos: [{ path: '/m/x.iso' }],
      bootOrder: ['iso', 'disk'],
    }), ctx());
    expect(values(args, '-drive')).toEqual([
      'if=none,id=disk0,file=/s/a.qcow2,format=qcow2,discard=unmap',
      'if=none,id=disk1,file=/s/b.qcow2,format=qcow2,discard=unmap',
      'if=none,id=disk2,file=/s/c.raw,format=raw,discard=unmap',
      'if=none,id=cd0,file=/m/x.iso,format=raw,media=cdrom,readonly=on',
    ]);
    const devices = values(args, '-device');
    // bootOrder iso first: the CD-ROM gets bootindex 1, then the disks in order
    expect(devices).toContain('virtio-blk-pci,drive=disk0,bootindex=2');
    expect(devices).toContain('ide-hd,drive=disk1,bus=ide.0,bootindex=3');
    expect(devices).toContain('ide-hd,drive=disk2,bus=ide.1,bootindex=4');
    expect(devices).toContain('ide-cd,drive=cd0,bus=ide.2,bootindex=1');
    expect(values(args, '-boot')).toEqual(['strict=on']);
  });

  it('gives NICs their MAC and model, and a bootindex only when network boot is asked', () => {
    const args = buildQemuArgs(spec({ nics: [{ id: 'a', mac: '52:54:00:AA:00:01' }, { id: 'b', mac: '52:54:00:aa:00:02', model: 'e1000' }] }), ctx());
    expect(values(args, '-netdev')).toEqual(['user,id=net0', 'user,id=net1']);
    const devices = values(args, '-device');
    expect(devices).toContain('virtio-net-pci,netdev=net0,mac=52:54:00:aa:00:01');
    expect(devices).toContain('e1000,netdev=net1,mac=52:54:00:aa:00:02');
    const pxe = values(buildQemuArgs(spec({ bootOrder: ['network', 'disk'] }), ctx()), '-device');
    expect(pxe).toContain('virtio-net-pci,netdev=net0,mac=52:54:00:aa:00:01,bootindex=1');
    expect(pxe).toContain('virtio-blk-pci,drive=disk0,bootindex=2');
  });

  it('puts a private NIC on its TAP (no scripts), and refuses one without a TAP', () => {
    const nics = [{ id: 'default', mac: '52:54:00:aa:00:01' }, { id: 'wireguard', mac: '52:54:00:aa:00:02', network: 'private' as const }];
    const args = buildQemuArgs(spec({ nics }), ctx({ taps: [undefined, 'gnet1t0123abcd'] }));
    expect(values(args, '-netdev')).toEqual(['user,id=net0', 'tap,id=net1,ifname=gnet1t0123abcd,script=no,downscript=no']);
    expect(values(args, '-device')).toContain('virtio-net-pci,netdev=net1,mac=52:54:00:aa:00:02');
    expect(() => buildQemuArgs(spec({ nics }), ctx())).toThrow(/TAP/);
  });

  it('hands the guest credentials over through fw_cfg from a file, never on the command line', () => {
    const args = buildQemuArgs(spec({ guestCredentials: { username: 'alice', password: 'p,w d' } }), ctx({ credentialsFile: '/run/vdi/d1/credentials' }));
    expect(values(args, '-fw_cfg')).toEqual(['name=opt/org.vdiportal/credentials,file=/run/vdi/d1/credentials']);
    expect(args.join(' ')).not.toContain('p,w d');
    expect(credentialsBlob({ username: 'alice', password: 'p,w d' })).toBe('YWxpY2U=\ncCx3IGQ=\n');
  });

  it('SPICE: loopback port, password from a secret file (never argv), qxl video, agent channel', () => {
    const args = buildQemuArgs(spec({ graphics: { vnc: false, spice: true } }),
      ctx({ spice: { host: '127.0.0.1', port: 5930, secretFile: '/run/vdi/d1/spice.secret' } }));
    expect(values(args, '-object')).toContain('secret,id=spice-pw,file=/run/vdi/d1/spice.secret');
    expect(values(args, '-spice')).toEqual(['port=5930,addr=127.0.0.1,password-secret=spice-pw']);
    expect(values(args, '-vga')).toEqual(['qxl']);
    expect(args).not.toContain('-vnc');
    expect(values(args, '-device')).toContain('virtserialport,bus=vser0.0,chardev=vdagent,name=com.redhat.spice.0');
    expect(() => buildQemuArgs(spec({ graphics: { vnc: false, spice: true } }), ctx())).toThrow(/no port/);
  });

  it('VNC alone: QEMU is the agent\'s peer (qemu-vdagent, clipboard on, mouse off) on the agent port of vser0', () => {
    const args = buildQemuArgs(spec(), ctx());
    expect(values(args, '-device')).toContain('virtio-serial-pci,id=vser0');
    expect(values(args, '-chardev').filter((c) => !c.startsWith('socket,id=qga0'))).toEqual(['qemu-vdagent,id=vdagent,name=vdagent,clipboard=on,mouse=off']);
    expect(values(args, '-device')).toContain('virtserialport,bus=vser0.0,chardev=vdagent,name=com.redhat.spice.0');
    // with SPICE too, the port is SPICE's (one agent port only), and one controller
    const both = buildQemuArgs(spec({ graphics: { vnc: true, spice: true } }), ctx({ spice: { host: '127.0.0.1', port: 5930, secretFile: '/s' } }));
    expect(values(both, '-chardev').filter((c) => !c.startsWith('socket,id=qga0'))).toEqual(['spicevmc,id=vdagent,name=vdagent']);
    expect(values(both, '-device').filter((d) => d.startsWith('virtio-serial-pci'))).toHaveLength(1);
    expect(values(both, '-device').filter((d) => d.includes('com.redhat.spice.0'))).toHaveLength(1);
    // no viewer at all: no clipboard agent (the guest agent's socket only)
    expect(values(buildQemuArgs(spec({ graphics: { vnc: false, spice: false } }), ctx()), '-chardev').filter((c) => !c.startsWith('socket,id=qga0'))).toEqual([]);
  });

  it('every machine: one virtio-serial bus with the guest agent\'s port on a socket in the run dir, the SPICE agent beside it', () => {
    for (const graphics of [{ vnc: true, spice: false }, { vnc: false, spice: true }]) {
      const args = buildQemuArgs(spec({ graphics }), ctx({ spice: { host: '127.0.0.1', port: 5930, secretFile: '/run/vdi/d1/spice.secret' } }));
      expect(values(args, '-device').filter((d) => d.startsWith('virtio-serial-pci'))).toEqual(['virtio-serial-pci,id=vser0']);
      expect(values(args, '-chardev')).toContain('socket,id=qga0,path=/run/vdi/d1/qga.sock,server=on,wait=off');
      expect(values(args, '-device')).toContain('virtserialport,bus=vser0.0,chardev=qga0,name=org.qemu.guest_agent.0');
    }
  });

  it('an explicit video model wins', () => {
    expect(values(buildQemuArgs(spec({ video: 'virtio' }), ctx()), '-vga')).toEqual(['virtio']);
    expect(values(buildQemuArgs(spec({ video: 'none' }), ctx()), '-vga')).toEqual(['none']);
  });

  it('escapes commas in paths so they cannot inject options', () => {
    expect(esc('/a,b/c')).toBe('/a,,b/c');
    const args = buildQemuArgs(spec({ disks: [{ path: '/s/x,format=raw,y.qcow2', bus: 'virtio' }] }), ctx());
    expect(values(args, '-drive')[0]).toBe('if=none,id=disk0,file=/s/x,,format=raw,,y.qcow2,format=qcow2,discard=unmap');
  });

  it('the sandbox can be turned off for QEMUs built without seccomp', () => {
    expect(buildQemuArgs(spec(), ctx())).toContain('-sandbox');
    expect(buildQemuArgs(spec(), ctx({ sandbox: false }))).not.toContain('-sandbox');
  });
});

describe('validateSpec', () => {
  it('rejects ids that could escape the run dir, bad MACs, relative paths and too many AHCI devices', () => {
    expect(() => validateSpec(spec({ id: '../x' }))).toThrow(/id must be/);
    expect(() => validateSpec(spec({ id: '' }))).toThrow(/id must be/);
    expect(() => validateSpec(spec({ nics: [{ id: 'n', mac: '52:54:00:aa:00' }] }))).toThrow(/MAC/);
    expect(() => validateSpec(spec({ disks: [{ path: 'rel.qcow2', bus: 'virtio' }] }))).toThrow(/absolute/);
    expect(() => validateSpec(spec({ isos: Array.from({ length: 7 }, (_, i) => ({ path: `/m/${i}.iso` })) }))).toThrow(/at most 6/);
    expect(() => validateSpec(spec({ memoryMb: 0 }))).toThrow(/memoryMb/);
    expect(() => validateSpec(spec({ bootOrder: ['disk', 'disk'] }))).toThrow(/twice/);
  });

  it('refuses run dirs whose socket paths would not fit a unix socket address', () => {
    expect(() => runPaths('/' + 'x'.repeat(100), 'd1')).toThrow(/too long/);
  });
});

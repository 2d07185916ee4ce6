import { describe, expect, it } from 'vitest';
import type { MachineSpec } from '../driver';
import { credentialsBlob } from '../qemu/args';
import { buildDomainXml, parseLiveXml } from './domain-xml';

const ctx = { domainType: 'qemu' as const, listen: '10.0.0.5', vncPassword: 'abcdefgh', spicePassword: 's3cret', startedAt: new Date('2026-01-02T03:04:05.678Z') };
const spec: MachineSpec = {
  id: 'd-1', name: 'Ada <lab>', memoryMb: 512, vcpus: 2,
  disks: [{ path: '/pool/a.qcow2', bus: 'default' }, { path: '/pool/b.raw', bus: 'ide', format: 'raw' }],
  isos: [{ path: "/pool/it's.iso" }],
  bootOrder: ['iso', 'disk'],
  nics: [{ id: 'n', mac: '52:54:00:AA:00:01', model: 'e1000' }],
  video: 'default', graphics: { vnc: true, spice: true },
};

describe('domain XML from a MachineSpec', () => {
  it('maps disks per bus, CD-ROMs, boot order, NICs, graphics with passwords, serial and our metadata', () => {
    const xml = buildDomainXml(spec, ctx);
    expect(xml).toContain("<domain type='qemu'><name>d-1</name><title>Ada &lt;lab&gt;</title>");
    expect(xml).toContain("startedAt='2026-01-02T03:04:05.678Z'");
    expect(xml).toContain("<memory unit='MiB'>512</memory><vcpu>2</vcpu>");
    expect(xml).toContain("<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>");
    expect(xml).toContain("<source file='/pool/a.qcow2'/><target dev='vda' bus='virtio'/><boot order='2'/>");
    expect(xml).toContain("<driver name='qemu' type='raw' discard='unmap'/><source file='/pool/b.raw'/><target dev='sda' bus='sata'/><boot order='3'/>");
    expect(xml).toContain("<source file='/pool/it&apos;s.iso'/><target dev='sdb' bus='sata'/><readonly/><boot order='1'/>");
    expect(xml).toContain("<mac address='52:54:00:aa:00:01'/><model type='e1000'/></interface>");
    expect(xml).toContain("<graphics type='vnc' autoport='yes' listen='10.0.0.5' passwd='abcdefgh'>");
    expect(xml).toContain("<graphics type='spice' autoport='yes' listen='10.0.0.5' passwd='s3cret'>");
    expect(xml).toContain("<video><model type='qxl'/></video>");
    expect(xml).toContain("<serial type='pty'>");
    expect(xml).toContain('<acpi/>');
  });

  it('the agent channel: SPICE\'s (spicevmc) with SPICE, QEMU\'s own (qemu-vdagent with the clipboard) with VNC alone', () => {
    const spice = buildDomainXml(spec, ctx);
    expect(spice).toContain("<channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>");
    expect(spice).not.toContain('qemu-vdagent');
    const vnc = buildDomainXml({ ...spec, graphics: { vnc: true, spice: false } }, ctx);
    expect(vnc).toContain(
      "<channel type='qemu-vdagent'><source><clipboard copypaste='yes'/><mouse mode='server'/></source><target type='virtio' name='com.redhat.spice.0'/></channel>",
    );
    expect(vnc).not.toContain('spicevmc');
    expect(buildDomainXml({ ...spec, graphics: { vnc: false, spice: false } }, ctx)).not.toContain('vdagent');
  });

  it('puts a private NIC on the host\'s guest bridge with the MTU the tunnel leaves, next to a NAT one', () => {
    const xml = buildDomainXml({ ...spec, nics: [{ id: 'n', mac: '52:54:00:AA:00:01' }, { id: 'p', mac: '52:54:00:AA:00:02', network: 'private' }], bootOrder: ['disk'] }, ctx);
    expect(xml).toContain("<interface type='user'><mac address='52:54:00:aa:00:01'/><model type='virtio'/></interface>");
    expect(xml).toContain("<interface type='bridge'><mac address='52:54:00:aa:00:02'/><source bridge='vdi-guests'/><model type='virtio'/><mtu size='1450'/></interface>");
  });

  it('hands the guest credentials over as the QEMU driver does: the same fw_cfg item and content, inline', () => {
    const xml = buildDomainXml({ ...spec, guestCredentials: { username: 'alice', password: 'p<w> d&' } }, ctx);
    expect(xml).toContain(`<sysinfo type='fwcfg'><entry name='opt/org.vdiportal/credentials'>${credentialsBlob({ username: 'alice', password: 'p<w> d&' })}</entry></sysinfo>`);
    expect(buildDomainXml(spec, ctx)).not.toContain('sysinfo');
  });

  it('refuses bad specs', () => {
    expect(() => buildDomainXml({ ...spec, id: '../x' }, ctx)).toThrow(expect.objectContaining({ code: 'invalid-spec' }));
  });
});

describe('the live domain XML', () => {
  const live = `<domain type='qemu' id='3'><name>d-1</name><metadata><vdi:machine xmlns:vdi="https://vdi-portal.org/ns/machine/1" startedAt="2026-01-02T03:04:05.678Z"/></metadata>
  <devices><graphics type='vnc' port='5900' autoport='yes' listen='10.0.0.5'><listen type='address' address='10.0.0.5'/></graphics>
  <graphics type="spice" port="5901" autoport="yes" listen="0.0.0.0"/></devices></domain>`;
  it('gives the name, our start time and the graphics endpoints at the host\'s address', () => {
    expect(parseLiveXml(live, '10.9.9.9')).toEqual({
      name: 'd-1',
      startedAt: new Date('2026-01-02T03:04:05.678Z'),
      vnc: { host: '10.0.0.5', port: 5900 },
      spice: { host: '10.9.9.9', port: 5901 },
    });
  });
  it('leaves out a graphics server without a port yet', () => {
    expect(parseLiveXml("<domain><name>x</name><devices><graphics type='vnc' port='-1'/></devices></domain>", 'h')).toEqual({ name: 'x' });
  });
});

import { connect as tlsConnect } from 'node:tls';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import ssh2 from 'ssh2';
import { bastionAddresses, bastionHostName, bastionTargetOf } from '@vdi/contracts';
import { checkAuthorizedKeys, parsePublicKeyLine } from './keys';
import { newHostKey } from './service';
import { httpHost, tlsServerName } from './sni';
const { utils } = ssh2;

/** A valid public key: ssh2's generator makes a malformed one (31 bytes) about 1 time in 150; those are drawn again. */
const key = (): string => {
  const k = utils.generateKeyPairSync('ed25519').public;
  return parsePublicKeyLine(k) ? k : key();
};

describe('authorized keys', () => {
  it('takes one public key per line, skipping blanks, comments and duplicates', () => {
    const a = key();
    const b = `${utils.generateKeyPairSync('ecdsa', { bits: 256 }).public} me@laptop`;
    expect(checkAuthorizedKeys(`${a}\n\n# work\n${b}\r\n${a}\n`)).toEqual([a, b]);
    expect(checkAuthorizedKeys([a, b])).toEqual([a, b]);
  });

  it('refuses a malformed or oversized line with its number', () => {
    const a = key();
    const bad = (input: string | string[]) => {
      try {
        checkAuthorizedKeys(input);
        return null;
      } catch (err) {
        return err as { code: string; params: { line: number } };
      }
    };
    expect(bad(`${a}\nssh-ed25519 AAAAnotakey`)).toMatchObject({ code: 'bastion_authorized_key_invalid', params: { line: 2 } });
    expect(bad('hello world')).toMatchObject({ code: 'bastion_authorized_key_invalid', params: { line: 1 } });
    expect(bad(`ssh-ed25519 ${'A'.repeat(20_000)}`)?.code).toBe('bastion_authorized_key_invalid');
    expect(bad(utils.generateKeyPairSync('ed25519').private)?.code).toBe('bastion_authorized_key_invalid');
    // a key of one type announced as another
    expect(parsePublicKeyLine(a.replace('ssh-ed25519', 'ssh-rsa'))).toBeNull();
    expect(bad(Array.from({ length: 51 }, () => key()))?.code).toBe('bastion_authorized_keys_too_many');
  });

  it("refuses the 31-byte keys ssh2's generator sometimes makes", () => {
    // A real ed25519 key is 32 bytes; this one lost its leading zero byte.
    expect(parsePublicKeyLine('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAH88M4Hx0dYsTojZThmc7twiM/f2120LTXlHGc0SyCfo=')).toBeNull();
  });
});

describe('bastion host key', () => {
  it('is always one ssh2 reads back (its generator makes an unreadable one about 1 time in 150)', () => {
    for (let i = 0; i < 600; i++) expect(utils.parseKey(newHostKey())).not.toBeInstanceOf(Error);
  });
});

describe('bastion names', () => {
  const id = '8d1f2c3a-aaaa-bbbb-cccc-0123456789ab';
  it("turn the target id's last dash into a dot under the domain, and back", () => {
    const host = bastionHostName(id, 'bastion.example.com');
    expect(host).toBe('8d1f2c3a-aaaa-bbbb-cccc.0123456789ab.bastion.example.com');
    expect(bastionTargetOf(host.toUpperCase(), 'bastion.example.com')).toBe(id);
    expect(bastionTargetOf(`${host}.`, 'bastion.example.com')).toBe(id);
    expect(bastionTargetOf(host, 'other.example.com')).toBeNull();
    expect(bastionTargetOf('evil.bastion.example.com', 'bastion.example.com')).toBeNull();
    expect(bastionTargetOf(`x.${host}`, 'bastion.example.com')).toBeNull();
  });

  it('give the addresses the desktop menu shows', () => {
    const a = bastionAddresses(id, { bastion_domain: 'b.example', bastion_ssh_port: '2222', http_port: '80', https_port: '8443' });
    expect(a).toEqual({
      host: '8d1f2c3a-aaaa-bbbb-cccc.0123456789ab.b.example',
      http: 'http://8d1f2c3a-aaaa-bbbb-cccc.0123456789ab.b.example/',
      https: 'https://8d1f2c3a-aaaa-bbbb-cccc.0123456789ab.b.example:8443/',
      ssh: `ssh ${id}@b.example -p 2222`,
    });
  });
});

describe('peeking at a connection', () => {
  it('reads the Host of an HTTP request, without its port', () => {
    expect(httpHost(Buffer.from('GET / HTTP/1.1\r\nHost: A.example:8080\r\n\r\n'))).toEqual({ kind: 'name', name: 'a.example' });
    expect(httpHost(Buffer.from('GET / HTTP/1.1\r\nHost: a.example\r\n'))).toEqual({ kind: 'need-more' });
    expect(httpHost(Buffer.from('GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'))).toEqual({ kind: 'none' });
    expect(httpHost(Buffer.from('GET / HTTP/1.1\r\nHost: a b\r\n\r\n'))).toEqual({ kind: 'none' });
    expect(httpHost(Buffer.from('SSH-2.0-x\r\n\r\n'))).toEqual({ kind: 'none' });
    expect(httpHost(Buffer.alloc(20_000, 'a'))).toEqual({ kind: 'none' });
  });

  it("reads the server name of a real TLS ClientHello (Node's)", async () => {
    const hello = await new Promise<Buffer>((resolve) => {
      const srv = createServer((s) => {
        s.once('data', (d) => {
          resolve(d);
          s.destroy();
          srv.close();
        });
      }).listen(0, '127.0.0.1', () => {
        const port = (srv.address() as { port: number }).port;
        tlsConnect({ host: '127.0.0.1', port, servername: 'Desk.Example.org', rejectUnauthorized: false }).on('error', () => undefined);
      });
    });
    expect(tlsServerName(hello)).toEqual({ kind: 'name', name: 'desk.example.org' });
    expect(tlsServerName(hello.subarray(0, 20))).toEqual({ kind: 'need-more' });
    expect(tlsServerName(Buffer.from('GET / HTTP/1.1\r\n\r\n'))).toEqual({ kind: 'none' });
  });
});

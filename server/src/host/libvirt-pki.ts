// The installation's certificates for hypervisors reached by `qemu+tls://`: a certificate authority of
// its own (made once with openssl, kept under DATA_DIR/pki/, keys 0600), the server's client
// certificate signed by it, and, on an admin's request, a host's server certificate for the host's
// libvirtd (its name or address in the certificate, as libvirt checks). libvirt's `pkipath=` names
// the client folder (cacert.pem, clientcert.pem, clientkey.pem). No key is ever logged.
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { runProgram } from './programs';

const pkiDir = (dataDir: string) => join(dataDir, 'pki');
/** The folder a `qemu+tls://…?pkipath=` names: the CA's certificate and the client pair. */
export const clientPkiPath = (dataDir: string) => join(pkiDir(dataDir), 'libvirt');
const caKeyFile = (dataDir: string) => join(pkiDir(dataDir), 'ca', 'cakey.pem');

/** Ten years: hosts and the installation are replaced long before. */
const DAYS = '3650';
const making = new Map<string, Promise<void>>();

const openssl = (args: string[]) => runProgram('openssl', args, { timeoutMs: 30_000 });

/** A host name or address as a certificate's subjectAltName names it (IP: for an address). */
export function subjectAltName(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return `IP:${bare}`;
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(bare)) throw new Error('not a host name or address');
  return `DNS:${bare}`;
}

/** Signs a new key's request with the installation's CA; the key and certificate in PEM. */
async function issue(dataDir: string, cn: string, ext: string): Promise<{ key: string; cert: string }> {
  const tmp = await mkdtemp(join(pkiDir(dataDir), '.issue-'));
  try {
    await writeFile(join(tmp, 'ext.cnf'), ext);
    await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/O=VDI portal/CN=${cn}`, '-keyout', join(tmp, 'key.pem'), '-out', join(tmp, 'req.pem')]);
    await openssl([
      'x509', '-req', '-in', join(tmp, 'req.pem'), '-CA', join(clientPkiPath(dataDir), 'cacert.pem'), '-CAkey', caKeyFile(dataDir),
      '-CAcreateserial', '-CAserial', join(pkiDir(dataDir), 'ca', 'serial'), '-days', DAYS, '-sha256', '-extfile', join(tmp, 'ext.cnf'), '-out', join(tmp, 'cert.pem'),
    ]);
    return { key: await readFile(join(tmp, 'key.pem'), 'utf8'), cert: await readFile(join(tmp, 'cert.pem'), 'utf8') };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The CA and the client pair, made once; two callers at once share one run. A run killed half-way starts over. */
export function ensureLibvirtPki(dataDir: string): Promise<void> {
  let pending = making.get(dataDir);
  if (!pending) {
    pending = (async () => {
      const client = clientPkiPath(dataDir);
      if (await readFile(join(client, 'clientkey.pem'), 'utf8').then(() => true, () => false)) return;
      await rm(pkiDir(dataDir), { recursive: true, force: true });
      await mkdir(join(pkiDir(dataDir), 'ca'), { recursive: true, mode: 0o700 });
      await mkdir(client, { recursive: true, mode: 0o700 });
      await openssl([
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', DAYS, '-sha256',
        '-subj', '/O=VDI portal/CN=VDI portal hypervisor CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
        '-keyout', caKeyFile(dataDir), '-out', join(client, 'cacert.pem'),
      ]);
      await chmod(caKeyFile(dataDir), 0o600);
      const pair = await issue(dataDir, 'vdi-portal', 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
      await writeFile(join(client, 'clientcert.pem'), pair.cert);
      // The key last, through a rename: its presence says the folder is whole.
      await writeFile(join(client, 'clientkey.pem.new'), pair.key, { mode: 0o600 });
      await rename(join(client, 'clientkey.pem.new'), join(client, 'clientkey.pem'));
    })().finally(() => making.delete(dataDir));
    making.set(dataDir, pending);
  }
  return pending;
}

/** The installation's CA certificate (PEM), for a host's `ca_file`. */
export async function caCertificate(dataDir: string): Promise<string> {
  await ensureLibvirtPki(dataDir);
  return readFile(join(clientPkiPath(dataDir), 'cacert.pem'), 'utf8');
}

/** A host's server certificate and key for its libvirtd (`cert_file`, `key_file`), for `host` as the URI names it. */
export async function issueHostCertificate(dataDir: string, host: string): Promise<{ caCert: string; cert: string; key: string }> {
  const san = subjectAltName(host);
  await ensureLibvirtPki(dataDir);
  const pair = await issue(dataDir, host.replace(/^\[|\]$/g, ''), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`);
  return { caCert: await caCertificate(dataDir), ...pair };
}

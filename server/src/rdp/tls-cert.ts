/**
 * The RD Gateway's TLS certificate: TLS_CERT/TLS_KEY (PEM files) when configured, else one made
 * with openssl on first start and kept under DATA_DIR/tls/ (self-signed: clients must be told
 * to trust it, or put the gateway behind a reverse proxy that has a real one).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram, type ProgramFailure } from '../host/programs';

export type TlsPair = { cert: string; key: string; generated: boolean; certPath: string };

export async function gatewayCertificate(opts: { dataDir: string; certFile?: string; keyFile?: string; hostname?: string }): Promise<TlsPair> {
  if (opts.certFile || opts.keyFile) {
    if (!opts.certFile || !opts.keyFile) throw new Error('TLS_CERT and TLS_KEY go together');
    return { cert: readFileSync(opts.certFile, 'utf8'), key: readFileSync(opts.keyFile, 'utf8'), generated: false, certPath: opts.certFile };
  }
  const dir = join(opts.dataDir, 'tls');
  const certPath = join(dir, 'rdp-gateway.crt');
  const keyPath = join(dir, 'rdp-gateway.key');
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const host = opts.hostname && /^[A-Za-z0-9.-]+$/.test(opts.hostname) ? opts.hostname : 'localhost';
    const san = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? `IP:${host}` : `DNS:${host}`;
    await runProgram('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '825',
      '-subj', `/CN=${host}`, '-addext', `subjectAltName=${san},DNS:localhost,IP:127.0.0.1`,
      '-keyout', keyPath, '-out', certPath,
    ]).catch((f: ProgramFailure) => {
      throw new Error(`openssl could not make the gateway's certificate: ${f.stderr.trim() || `exit ${f.code}`}`);
    });
  }
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8'), generated: true, certPath };
}

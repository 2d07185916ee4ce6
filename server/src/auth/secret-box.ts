/**
 * Secrets an admin configures (a directory's bind password, an OpenID client secret, a SAML signing key) are kept
 * sealed with AES-256-GCM under a key derived from the server's SECRET: a copy of the database alone does not hold
 * them. `open` refuses anything altered.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

const keyOf = (serverSecret: string) => Buffer.from(hkdfSync('sha256', serverSecret, 'vdi-secret-box', 'configured secrets', 32));

export function sealSecret(serverSecret: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(serverSecret), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

export function openSecret(serverSecret: string, sealed: string): string {
  const [version, data] = sealed.split('.', 2);
  if (version !== VERSION || !data) throw new Error('not a sealed secret');
  const raw = Buffer.from(data, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(serverSecret), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

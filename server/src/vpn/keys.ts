// WireGuard keys: Curve25519 (x25519) pairs made with Node's crypto, as WireGuard writes them
// (the raw 32-byte keys in base64).
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';

export type WgKeyPair = { privateKey: string; publicKey: string };

const b64 = (jwkPart: string | undefined) => Buffer.from(jwkPart ?? '', 'base64url').toString('base64');

export function generateWgKeyPair(): WgKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const priv = privateKey.export({ format: 'jwk' });
  const pub = publicKey.export({ format: 'jwk' });
  return { privateKey: b64(priv.d), publicKey: b64(pub.x) };
}

/** The public key of a base64 private key (throws when it is not a 32-byte key). */
export function wgPublicKeyOf(privateKey: string): string {
  const raw = Buffer.from(privateKey, 'base64');
  if (raw.length !== 32) throw new Error('a WireGuard private key is 32 bytes');
  const key = createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: raw.toString('base64url'), x: '' }, format: 'jwk' });
  return b64(createPublicKey(key).export({ format: 'jwk' }).x);
}

export const isWgKey = (key: string) => /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/.test(key);

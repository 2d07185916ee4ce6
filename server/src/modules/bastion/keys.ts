// A bastion's authorized keys: one public SSH key per line, each checked (type, encoding, size).
import ssh2 from 'ssh2';
import { BASTION_MAX_KEY_LENGTH, BASTION_MAX_KEYS } from '@vdi/contracts';
import { badRequest } from '../../http/errors';
const { utils } = ssh2; // a CommonJS package: no named exports under Node's ESM

const KEY_TYPES = new Set([
  'ssh-ed25519',
  'ssh-rsa',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
]);

/** A public key line → `type base64 [comment]` normalised; null when it is not one. */
export function parsePublicKeyLine(line: string): string | null {
  // eslint-disable-next-line no-control-regex -- a key line with control characters is refused
  if (line.length > BASTION_MAX_KEY_LENGTH || /[\u0000-\u001f\u007f]/.test(line)) return null;
  const [type, data, ...comment] = line.trim().split(/\s+/);
  if (!type || !data || !KEY_TYPES.has(type) || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return null;
  const parsed = utils.parseKey(`${type} ${data}`);
  if (parsed instanceof Error || parsed.isPrivateKey() || parsed.type !== type) return null;
  return [type, data, ...comment].join(' ');
}

/**
 * The keys of a PUT (a list, or one text with a key per line): blank lines and `#` comments are
 * skipped, duplicates dropped; a bad line is 400 `bastion_authorized_key_invalid` with its number.
 */
export function checkAuthorizedKeys(input: string[] | string): string[] {
  const lines = typeof input === 'string' ? input.split(/\r?\n/) : input.flatMap((k) => k.split(/\r?\n/));
  const keys: string[] = [];
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const key = parsePublicKeyLine(line);
    if (!key) throw badRequest('bastion_authorized_key_invalid', `Line ${i + 1} is not a public SSH key`, { line: i + 1 });
    if (!keys.includes(key)) keys.push(key);
  });
  if (keys.length > BASTION_MAX_KEYS) {
    throw badRequest('bastion_authorized_keys_too_many', `At most ${BASTION_MAX_KEYS} authorized keys`, { max: BASTION_MAX_KEYS });
  }
  return keys;
}

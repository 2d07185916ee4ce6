import { randomInt } from 'node:crypto';
import type { TPasswordPolicy } from '@vdi/contracts';

/**
 * Readable one-time passwords for classroom accounts: read aloud, copied from a printed card. No
 * characters that look alike in common fonts (0 O o, 1 l I i, 5 S, 2 Z, 8 B, u v, q g), groups of
 * four joined by hyphens (`k7Pm-x3Ta-9aRw`), never a character a spreadsheet reads as a formula at
 * a cell's start. Each character comes from the operating system's random source.
 */
export const LOWER = 'abcdefhjkmnprstwxyz';
export const UPPER = 'ACDEFGHJKLMNPRTWXY';
export const DIGITS = '34679';
/** Extra signs, only when a policy asks for more than the hyphens give. */
export const SIGNS = '#%*';
const GROUP = 4;
/** 12 characters from 42 → about 64 bits, plus the order of the classes. */
const MIN_BODY = 12;

const pick = (alphabet: string) => alphabet[randomInt(alphabet.length)]!;

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** A one-time password that meets `policy` (length, digits, upper and lower case, special characters, not the user name). */
export function oneTimePassword(policy: Pick<TPasswordPolicy, 'length' | 'digits' | 'uppercase' | 'lowercase' | 'special_characters' | 'not_username'> | null, username = ''): string {
  const need = {
    digits: Math.max(2, policy?.digits ?? 0),
    upper: Math.max(2, policy?.uppercase ?? 0),
    lower: Math.max(2, policy?.lowercase ?? 0),
    special: policy?.special_characters ?? 0,
  };
  for (let attempt = 0; ; attempt++) {
    // The body's length: enough for the policy's length with the hyphens between groups, and for every class asked.
    let body = Math.max(MIN_BODY, need.digits + need.upper + need.lower);
    const hyphens = (n: number) => Math.ceil(n / GROUP) - 1;
    const signs = () => Math.max(0, need.special - hyphens(body));
    while (body + hyphens(body) < (policy?.length ?? 0) || body < need.digits + need.upper + need.lower + signs()) body++;
    const chars = [
      ...Array.from({ length: need.digits }, () => pick(DIGITS)),
      ...Array.from({ length: need.upper }, () => pick(UPPER)),
      ...Array.from({ length: need.lower }, () => pick(LOWER)),
      ...Array.from({ length: signs() }, () => pick(SIGNS)),
    ];
    const all = LOWER + UPPER + DIGITS;
    while (chars.length < body) chars.push(pick(all));
    shuffle(chars);
    const groups: string[] = [];
    for (let i = 0; i < chars.length; i += GROUP) groups.push(chars.slice(i, i + GROUP).join(''));
    const password = groups.join('-');
    if (policy?.not_username && username && password.toLowerCase().includes(username.toLowerCase()) && attempt < 100) continue;
    return password;
  }
}

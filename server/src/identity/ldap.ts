/**
 * LDAP and Active Directory sign-in (the adapter: it knows the protocol, never the portal's rules).
 *
 * A sign-in: connect (ldaps:// with the configured CA, or ldap:// upgraded by StartTLS when `start_tls`),
 * bind as the configured account (or anonymously), look the person up under `user_base` with `user_filter`
 * (the typed name escaped per RFC 4515), exactly one entry or nobody, then check the password by a bind as
 * that entry's DN on a connection of its own, and read the person's attributes and groups. Every step is
 * bounded in time: a directory that is down or hangs fails within seconds.
 *
 * The person's uid is the value of the entry's user-name attribute as the directory holds it (not as typed):
 * the same account as the original service (uid = user name for LDAP), it survives a directory rebuilt or
 * moved to other software (entryUUID / objectGUID do not), and admins can predict it. entryUUID and
 * objectGUID are read as attributes when the directory answers them, for mapping rules.
 */
import { Client, InvalidCredentialsError, SizeLimitExceededError, type Entry } from 'ldapts';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { TLdapSettings } from '@vdi/contracts';
import type { ExternalIdentity } from './person';

/** A person the directory vouched for. */
export type LdapPerson = ExternalIdentity;

/** What a log may carry of a sign-in (never a password). */
type Log = { debug(obj: object, msg: string): void };

export const LDAP_LIMITS = {
  /** TCP connection (and TLS handshake) */
  connectMs: 4_000,
  /** Each operation: bind, search, StartTLS */
  operationMs: 5_000,
  /** A whole sign-in, however many round trips */
  totalMs: 15_000,
  /** A photo larger than this is left out (a data: URL would weigh on every session). */
  photoBytes: 200_000,
  /** Group search answers */
  groups: 1_000,
};

/** RFC 4515: a value inside a filter, its special characters (and any other control character) as \XX. */
export function escapeFilterValue(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\\*()\u0000-\u001f\u007f]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A filter template with {username} and {dn} filled in, escaped. */
export function fillFilter(template: string, values: { username?: string; dn?: string }): string {
  return template.replace(/\{(username|dn)\}/g, (_, key: 'username' | 'dn') => escapeFilterValue(values[key] ?? ''));
}

/** Attributes never kept, whatever the directory lets the bind account read. */
const SECRET_ATTRIBUTE = /pass|pwd|secret|key|hash/i;
const BINARY_ATTRIBUTES = ['jpegPhoto', 'thumbnailPhoto', 'photo', 'objectGUID', 'objectSid', 'userCertificate', 'userCertificate;binary', 'audio'];

const listOf = (v: Entry[string] | undefined): (string | Buffer)[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const valueOf = (entry: Entry, name: string): Entry[string] | undefined => {
  if (!name) return undefined;
  const key = Object.keys(entry).find((k) => k.toLowerCase() === name.toLowerCase());
  return key ? entry[key] : undefined;
};
const firstText = (entry: Entry, name: string): string => {
  const v = listOf(valueOf(entry, name))[0];
  return v === undefined ? '' : typeof v === 'string' ? v : v.toString('utf8');
};

/** A photo attribute as a data: URL (JPEG or PNG by their magic numbers), an http(s) address as it is, else none. */
export function photoOf(value: string | Buffer | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return /^https?:\/\//i.test(value) && value.length <= 2_048 ? value : '';
  if (value.length === 0 || value.length > LDAP_LIMITS.photoBytes) return '';
  const type = value[0] === 0xff && value[1] === 0xd8 ? 'image/jpeg' : value.subarray(0, 4).toString('hex') === '89504e47' ? 'image/png' : '';
  return type ? `data:${type};base64,${value.toString('base64')}` : '';
}

/** objectGUID (16 bytes) as AD writes it; other binary values as hex. */
const binaryText = (name: string, b: Buffer) =>
  name.toLowerCase() === 'objectguid' && b.length === 16
    ? [b.subarray(0, 4).reverse(), b.subarray(4, 6).reverse(), b.subarray(6, 8).reverse(), b.subarray(8, 10), b.subarray(10)].map((x) => Buffer.from(x).toString('hex')).join('-')
    : undefined;

/** Every readable, non-secret attribute as strings (binary ones left out, but objectGUID as text). */
function attributesOf(entry: Entry): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, raw] of Object.entries(entry)) {
    if (name === 'dn' || SECRET_ATTRIBUTE.test(name)) continue;
    const values = listOf(raw)
      .map((v) => (typeof v === 'string' ? v : binaryText(name, v)))
      .filter((v): v is string => v !== undefined);
    if (values.length > 0) out[name] = values;
  }
  out.dn = [entry.dn];
  return out;
}

function tlsOptions(settings: TLdapSettings, host: string): ConnectionOptions {
  // With the admin's CA, only that CA (never the system's as well); always verified.
  // `host`: the name the certificate must carry (StartTLS upgrades a socket, which has none); SNI only for names.
  return { ...(settings.ca.trim() ? { ca: [settings.ca] } : {}), rejectUnauthorized: true, host, ...(isIP(host) ? {} : { servername: host }) };
}

/** A connection, secured as configured (ldaps://, or ldap:// then StartTLS). */
async function connect(settings: TLdapSettings): Promise<Client> {
  const url = new URL(settings.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const ldaps = url.protocol === 'ldaps:';
  // A CA says the admin meant TLS: never fall back to a connection in the clear.
  if (!ldaps && !settings.start_tls && settings.ca.trim()) throw new Error('a CA is set but the address is ldap:// without StartTLS: use ldaps:// or StartTLS');
  // ldapts connects with TLS whenever tlsOptions are given: only for ldaps://.
  const client = new Client({
    url: settings.url.replace(/\/$/, ''),
    connectTimeout: LDAP_LIMITS.connectMs,
    timeout: LDAP_LIMITS.operationMs,
    ...(ldaps ? { tlsOptions: tlsOptions(settings, host) } : {}),
  });
  if (!ldaps && settings.start_tls) {
    try {
      await client.startTLS(tlsOptions(settings, host));
    } catch (err) {
      await client.unbind().catch(() => undefined);
      throw err;
    }
  }
  return client;
}

/** Ends `work` with an error after `ms`, closing the connections it opened. */
async function bounded<T>(ms: number, clients: Client[], work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the directory did not answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
    await Promise.all(clients.map((c) => c.unbind().catch(() => undefined)));
  }
}

/**
 * The person the directory knows by `username` with `password`; null when it does not (no such name, several
 * entries, a wrong or empty password). Throws when the directory cannot be reached or refuses the bind
 * account (the caller answers "unavailable").
 */
export async function authenticateLdap(
  settings: TLdapSettings,
  bindPassword: string | null,
  username: string,
  password: string,
  log?: Log,
): Promise<LdapPerson | null> {
  // An empty password would be an unauthenticated bind (RFC 4513 5.1.2), which directories accept: never tried.
  if (!password || !username.trim()) return null;
  const clients: Client[] = [];
  return bounded(LDAP_LIMITS.totalMs, clients, async () => {
    const search = await connect(settings);
    clients.push(search);
    if (settings.bind_dn) await search.bind(settings.bind_dn, bindPassword ?? '');
    const a = settings.attributes;
    const wanted = [...new Set(['*', 'entryUUID', a.username, a.name, a.email, a.photo, a.groups].filter(Boolean))];
    const binary = [...new Set([...BINARY_ATTRIBUTES, ...(a.photo ? [a.photo] : [])])];
    let searchEntries: Entry[];
    try {
      ({ searchEntries } = await search.search(settings.user_base, {
        scope: 'sub',
        filter: fillFilter(settings.user_filter, { username: username.trim() }),
        attributes: wanted,
        explicitBufferAttributes: binary,
        sizeLimit: 2,
        timeLimit: Math.ceil(LDAP_LIMITS.operationMs / 1000),
      }));
    } catch (err) {
      // More than one entry answers that name: nobody (a name must point at one person).
      if (err instanceof SizeLimitExceededError) searchEntries = [];
      else throw err;
    }
    if (searchEntries.length !== 1) {
      log?.debug({ entries: searchEntries.length }, 'directory: no single entry for that name');
      return null;
    }
    const entry = searchEntries[0]!;
    // The password, by a bind as the entry on a connection of its own (the search connection keeps its account).
    const check = await connect(settings);
    clients.push(check);
    try {
      await check.bind(entry.dn, password);
    } catch (err) {
      if (err instanceof InvalidCredentialsError) {
        log?.debug({ dn: entry.dn }, 'directory: wrong password');
        return null;
      }
      throw err;
    }
    const uid = firstText(entry, a.username);
    if (!uid) return null;
    const groups = listOf(valueOf(entry, a.groups)).map((v) => (typeof v === 'string' ? v : v.toString('utf8')));
    if (settings.group_base) {
      const found = await search.search(settings.group_base, {
        scope: 'sub',
        filter: fillFilter(settings.group_filter, { username: uid, dn: entry.dn }),
        attributes: ['1.1'],
        sizeLimit: LDAP_LIMITS.groups,
        timeLimit: Math.ceil(LDAP_LIMITS.operationMs / 1000),
      });
      for (const g of found.searchEntries) if (!groups.some((x) => x.toLowerCase() === g.dn.toLowerCase())) groups.push(g.dn);
    }
    const photo = a.photo ? photoOf(listOf(valueOf(entry, a.photo))[0]) : '';
    return {
      uid,
      username: uid,
      name: firstText(entry, a.name),
      email: firstText(entry, a.email),
      photo,
      groups,
      attributes: attributesOf(entry),
    };
  });
}

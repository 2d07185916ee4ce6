import { z } from 'zod';

// The user VPN file and the bastion (seed 001: VPN download, seed 000 §3 Bastion; reference §2.15, §4.7).

/** `GET /user/vpn/config`: a WireGuard configuration file to download. */
export const ZVpnConfig = z.object({
  kind: z.literal('file'),
  name: z.string(),
  ext: z.string(),
  mime: z.string(),
  content: z.string(),
});
export type TVpnConfig = z.infer<typeof ZVpnConfig>;

/** Limits of the authorized keys of a bastion (one per line). */
export const BASTION_MAX_KEYS = 50;
export const BASTION_MAX_KEY_LENGTH = 16_384;

const port = z.number().int().min(1).max(65535);

/** A desktop's bastion target, as `GET /desktop/bastion/{id}` answers it (created on the first GET). */
export const ZBastion = z.object({
  id: z.string(),
  desktop_id: z.string(),
  user_id: z.string(),
  domains: z.array(z.string()),
  http: z.object({ enabled: z.boolean(), http_port: port, https_port: port, proxy_protocol: z.boolean() }),
  ssh: z.object({ enabled: z.boolean(), port, authorized_keys: z.array(z.string()) }),
});
export type TBastion = z.infer<typeof ZBastion>;

/**
 * `PUT /desktop/bastion/{id}`: the same shape, every part optional. `authorized_keys` is a list or a
 * text with one key per line; each is checked (`bastion_authorized_key_invalid` with its line).
 */
export const ZBastionUpdate = z
  .object({
    http: z
      .object({ enabled: z.boolean().optional(), http_port: port.optional(), https_port: port.optional(), proxy_protocol: z.literal(false).optional() })
      .strict()
      .optional(),
    ssh: z
      .object({
        enabled: z.boolean().optional(),
        port: port.optional(),
        authorized_keys: z
          .union([z.array(z.string().max(BASTION_MAX_KEY_LENGTH * 2)).max(BASTION_MAX_KEYS * 4), z.string().max(BASTION_MAX_KEY_LENGTH * BASTION_MAX_KEYS)])
          .optional(),
      })
      .strict()
      .optional(),
    // Custom domains need a verification this server does not offer: only an empty list is taken.
    domains: z.array(z.string().max(253)).max(0).optional(),
  })
  .strict();
export type TBastionUpdate = z.infer<typeof ZBastionUpdate>;

export const ZBastionList = z.array(ZBastion);

/** A bastion's host name: the target UUID with its last `-` turned into `.`, under the bastion domain (reference §4.7). */
export function bastionHostName(targetId: string, domain: string): string {
  const i = targetId.lastIndexOf('-');
  const label = i < 0 ? targetId : `${targetId.slice(0, i)}.${targetId.slice(i + 1)}`;
  return `${label}.${domain}`.toLowerCase();
}

/** The target id a bastion host name stands for, or null when it is not one under `domain`. */
export function bastionTargetOf(host: string, domain: string): string | null {
  const h = host.toLowerCase().replace(/\.$/, '');
  const suffix = `.${domain.toLowerCase()}`;
  if (!h.endsWith(suffix)) return null;
  const m = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4})\.([0-9a-f]{12})$/.exec(h.slice(0, -suffix.length));
  return m ? `${m[1]}-${m[2]}` : null;
}

/** What the desktop menu's "bastion info" shows. */
export function bastionAddresses(
  targetId: string,
  cfg: { bastion_domain: string | null; bastion_ssh_port: string | null; http_port: string; https_port: string },
) {
  if (!cfg.bastion_domain) return null;
  const host = bastionHostName(targetId, cfg.bastion_domain);
  const withPort = (scheme: string, p: string, def: string) => `${scheme}://${host}${p === def ? '' : `:${p}`}/`;
  return {
    host,
    http: withPort('http', cfg.http_port, '80'),
    https: withPort('https', cfg.https_port, '443'),
    ssh: `ssh ${targetId}@${cfg.bastion_domain}${cfg.bastion_ssh_port && cfg.bastion_ssh_port !== '22' ? ` -p ${cfg.bastion_ssh_port}` : ''}`,
  };
}

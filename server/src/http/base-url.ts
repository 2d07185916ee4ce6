import type { FastifyRequest } from 'fastify';
import type { Config } from '../config';
import type { Settings } from '../settings';
import { precondition } from './errors';

type Ctx = { config: Config; settings: Settings };

const trimmed = (url: string) => url.replace(/\/+$/, '');

/**
 * The portal's configured public address: `PUBLIC_URL`, else the admin's `public_address` setting
 * (console → Mail); null when neither is set. Links in mails and files a person keeps or hands on
 * come only from here, never from a request's Host header (anyone can send any Host).
 */
export async function configuredPublicUrl(ctx: Ctx): Promise<string | null> {
  if (ctx.config.publicUrl) return trimmed(ctx.config.publicUrl);
  const { url } = await ctx.settings.get('public_address');
  return url ? trimmed(url) : null;
}

/** The configured public address, or 428 `public_url_not_configured` (nothing is sent or made without it). */
export async function requirePublicUrl(ctx: Ctx): Promise<string> {
  const url = await configuredPublicUrl(ctx);
  if (!url) {
    throw precondition('public_url_not_configured', "The portal's public address is not set (PUBLIC_URL, or console → Mail)");
  }
  return url;
}

/**
 * The address the person used to reach us, for an answer to their own request that is used at once
 * and not kept (the SPICE proxy of a viewer file they asked for): the host they reached is the host
 * that works for them, and a forged Host only misleads the one who forged it. The configured address
 * wins when there is one. Never for mails or files that are kept or handed on (`configuredPublicUrl`).
 */
export function requestBaseUrl(config: Config, request: FastifyRequest): string {
  if (config.publicUrl) return trimmed(config.publicUrl);
  return `${request.protocol}://${request.host}`;
}

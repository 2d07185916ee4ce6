import type { FastifyRequest } from 'fastify';
import type { Config } from '../config';

/** Where links in mails point: PUBLIC_URL, or the address the person used to reach us. */
export function publicBaseUrl(config: Config, request: FastifyRequest): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/$/, '');
  return `${request.protocol}://${request.host}`;
}

import type { FastifyReply } from 'fastify';
import { statusIn, VIEWABLE } from '@vdi/contracts';
import type { AppContext } from '../../context';
import { notFound } from '../../http/errors';
import type { DomainRow } from '../shared/domains';

/** A running desktop's screen as a PNG (the engine's screendump), kept 5 s by the browser: the owner's card and the console's page. */
export async function sendScreenshot(ctx: AppContext, row: DomainRow, reply: FastifyReply) {
  if (!statusIn(VIEWABLE, row.status)) throw notFound('desktop_not_found', 'The desktop is not running');
  const png = await ctx.engine.driver.screenshot(row.id).catch(() => null);
  if (!png) throw notFound('desktop_not_found', 'No screen to show yet');
  return reply.type('image/png').header('cache-control', 'private, max-age=5').send(png);
}

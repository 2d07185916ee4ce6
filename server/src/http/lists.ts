import type { FastifyReply } from 'fastify';
import { LIST_TOTAL_HEADER } from '@vdi/contracts';

/**
 * Route options of the long lists (a thousand desktops): their views are built as objects of the
 * contract's type by the view code (checked when compiled), so the answer skips the zod response
 * check, which costs more than the query for such a list, and goes out through JSON.stringify.
 * Their API tests parse the answers with the contract's schema.
 */
export const plainJsonAnswer = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) } as const;

/** A list's items as the answer (a plain array); a paged list tells its whole length in `x-total-count`. */
export function listAnswer<T>(reply: FastifyReply, list: { items: T[]; total: number | null }): T[] {
  if (list.total !== null) reply.header(LIST_TOTAL_HEADER, String(list.total));
  return list.items;
}

/** A list already written as JSON text (a kept answer), sent as it is; when paged, with its whole length. */
export function jsonTextAnswer(reply: FastifyReply, body: string, total: number | null) {
  if (total !== null) reply.header(LIST_TOTAL_HEADER, String(total));
  return reply.type('application/json; charset=utf-8').serializer((payload: unknown) => payload as string).send(body);
}

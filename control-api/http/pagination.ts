import { z } from 'zod';
import { ApiError } from '../../core/errors.ts';
import { type IdKind, idPattern } from '../../core/ids.ts';
import { idOf } from '../schemas/common.ts';

export const pageLimit = z.coerce
  .number()
  .int()
  .min(1)
  .max(100)
  .default(20)
  .describe('Items per page, 1-100 (default 20)');

export const pageCursor = z
  .string()
  .min(1)
  .max(128)
  .describe("The previous page's `next_cursor`: the page after it");

/**
 * Cursor pagination over ids of one kind: `?limit=` with either the opaque `cursor` a previous page returned
 * or `starting_after=<id>` (an item of the list). Nothing else: an unknown parameter is refused, so a client
 * never silently gets the first page again.
 */
export function listQuery(kind: IdKind) {
  return z
    .object({
      limit: pageLimit,
      starting_after: idOf(kind)
        .describe(`The ${kind} id to continue after (an item of a previous page)`)
        .optional(),
      cursor: pageCursor.optional(),
    })
    .strict();
}

export type ListQuery = z.infer<ReturnType<typeof listQuery>>;

export function encodeCursor(position: string): string {
  return Buffer.from(JSON.stringify({ after: position })).toString('base64url');
}

/** The id to continue after, from `starting_after` or `cursor`; undefined for the first page. */
export function resolveCursor(query: ListQuery, kind: IdKind): string | undefined {
  return resolveKeyCursor(query, idPattern(kind));
}

/**
 * The key to continue after in a list ordered by a natural key (a secret's name, a listed number) rather than
 * an id: from `starting_after` or an opaque `cursor`, each checked against `pattern`.
 */
export function resolveKeyCursor(
  query: { starting_after?: string | undefined; cursor?: string | undefined },
  pattern: RegExp,
): string | undefined {
  if (query.starting_after && query.cursor) {
    throw new ApiError('invalid_request', 'cursor: send either cursor or starting_after, not both');
  }
  if (query.starting_after) return query.starting_after;
  if (!query.cursor) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
    const after = (decoded as { after?: unknown }).after;
    if (typeof after === 'string' && pattern.test(after)) return after;
  } catch {
    // falls through to the error below
  }
  throw new ApiError('invalid_request', 'cursor: is not a next_cursor of this list');
}

export interface ListBody<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export function listBody<T>(data: T[], hasMore: boolean, positionOf: (item: T) => string): ListBody<T> {
  const last = data[data.length - 1];
  return {
    object: 'list',
    data,
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor(positionOf(last)) : null,
  };
}

export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({
    object: z.literal('list'),
    data: z.array(item),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
  });

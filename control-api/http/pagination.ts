import { z } from 'zod';
import { ApiError } from '../../core/errors.ts';

/** Cursor pagination: `?limit=&starting_after=<id>` or the opaque `cursor` a previous page returned. */
export const listQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    starting_after: z.string().min(1).max(64).optional(),
    cursor: z.string().min(1).max(128).optional(),
  })
  .strict();

export type ListQuery = z.infer<typeof listQuery>;

export function encodeCursor(position: string): string {
  return Buffer.from(JSON.stringify({ after: position })).toString('base64url');
}

/** The position to continue after, from `starting_after` or `cursor`; undefined for the first page. */
export function resolveCursor(query: ListQuery): string | undefined {
  if (query.starting_after && query.cursor) {
    throw new ApiError('invalid_request', 'cursor: send either cursor or starting_after, not both');
  }
  if (query.starting_after) return query.starting_after;
  if (!query.cursor) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
    const after = (decoded as { after?: unknown }).after;
    if (typeof after === 'string' && after.length > 0 && after.length <= 64) return after;
  } catch {
    // falls through to the error below
  }
  throw new ApiError('invalid_request', 'cursor: is not a cursor this API returned');
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

import type { Page } from './values.ts';

/** Page sizes the store accepts; the API narrows further. */
export function assertLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
  return limit;
}

/** `rows` were fetched with `limit + 1`: the extra row only says there is more. */
export function toPage<R, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  return { items: rows.slice(0, limit).map(map), hasMore: rows.length > limit };
}

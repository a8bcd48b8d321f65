import { isUtf8 } from 'node:buffer';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.ts';

/**
 * Takes `text/csv` bodies on the routes of `app` (an encapsulated scope): parsed into rows of cells (see
 * `parseCsv`), then turned by `toBody` into the JSON body those routes validate, so both forms meet one schema.
 */
export function registerCsvBodies(app: FastifyInstance, toBody: (rows: string[][]) => unknown): void {
  app.addContentTypeParser('text/csv', { parseAs: 'buffer' }, (_request, raw, done) => {
    try {
      done(null, toBody(parseCsv(raw as Buffer)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

export function isCsvRequest(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('text/csv');
}

/**
 * Rows of cells: strict UTF-8, a byte order mark dropped, blank lines skipped, cells trimmed, rows of any
 * width. A malformed file (an unclosed quote) is `400 invalid_request` with the line.
 */
export function parseCsv(raw: Buffer): string[][] {
  if (!isUtf8(raw)) throw new ApiError('invalid_request', 'body: is not valid UTF-8');
  try {
    return parse(raw, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true });
  } catch (error) {
    const line = (error as { lines?: unknown }).lines;
    throw new ApiError(
      'invalid_request',
      `body: malformed CSV${typeof line === 'number' ? ` near line ${line}` : ''}`,
    );
  }
}

/**
 * The cells of one column, by header name (the first of `names` the header holds, case-insensitive); when the
 * first row names none of them, it is data and the first column is used.
 */
export function csvColumn(rows: readonly string[][], names: readonly string[]): string[] {
  const header = (rows[0] ?? []).map((cell) => cell.toLowerCase());
  const named = names.map((name) => header.indexOf(name)).find((index) => index >= 0);
  if (named !== undefined) return rows.slice(1).map((row) => row[named] ?? '');
  return rows.map((row) => row[0] ?? '');
}

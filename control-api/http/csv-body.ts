import { isUtf8 } from 'node:buffer';
import { pipeline, type Readable, Transform } from 'node:stream';
import { parse } from 'csv-parse';
import { parse as parseWhole } from 'csv-parse/sync';
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
    return parseWhole(raw, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true });
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

/**
 * Takes `text/csv` bodies on the routes of `app` as the request stream itself, for routes that read a large
 * file row by row (`csvRowBatches`) instead of whole.
 */
export function registerStreamedCsvBodies(app: FastifyInstance): void {
  app.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));
}

/**
 * The rows of a CSV stream in batches of `batchRows`, read as they arrive (memory bounded by the batch, not
 * the file): the parsing rules of `parseCsv`; more than `maxBytes` is `413 body_too_large`, more than
 * `maxRows` rows (the header counted) `400 invalid_request`.
 */
export async function* csvRowBatches(
  source: Readable,
  limits: { maxBytes: number; maxRows: number; batchRows: number },
): AsyncGenerator<string[][]> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) {
        callback(
          new ApiError(
            'body_too_large',
            `body: larger than the ${limits.maxBytes}-byte limit of a CSV upload`,
          ),
        );
      } else callback(null, chunk);
    },
  });
  const parser = parse({ bom: true, skip_empty_lines: true, trim: true, relax_column_count: true });
  pipeline(source, counter, parser, () => {});
  let batch: string[][] = [];
  let rows = 0;
  try {
    for await (const row of parser as AsyncIterable<string[]>) {
      if (++rows > limits.maxRows) {
        throw new ApiError('invalid_request', `body: at most ${limits.maxRows - 1} rows after the header`);
      }
      batch.push(row);
      if (batch.length >= limits.batchRows) {
        yield batch;
        batch = [];
      }
    }
  } catch (error) {
    source.destroy();
    if (error instanceof ApiError) throw error;
    const line = (error as { lines?: unknown }).lines;
    throw new ApiError(
      'invalid_request',
      `body: malformed CSV${typeof line === 'number' ? ` near line ${line}` : ''}`,
    );
  }
  if (batch.length > 0) yield batch;
}

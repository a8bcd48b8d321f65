import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DNC_LIMITS, type DncList, INDIAN_E164 } from '../../../core/campaigns/dnc.ts';
import { isoTime } from '../../../core/clock.ts';
import { ApiError } from '../../../core/errors.ts';
import type { DncEntry } from '../../../core/store/types.ts';
import { csvColumn, isCsvRequest, registerCsvBodies } from '../../http/csv-body.ts';
import { listBody, listEnvelope, pageCursor, pageLimit, resolveKeyCursor } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { timestamp } from '../../schemas/common.ts';

/** CSV headers naming the number column; without one of them, the first column holds the numbers. */
const CSV_NUMBER_COLUMNS = ['number', 'phone', 'to'];

const reason = z.string().min(1).max(DNC_LIMITS.reasonChars);

const entrySchema = z.object({
  object: z.literal('dnc_entry'),
  number: z.string().describe('E.164'),
  reason: z.string().nullable(),
  source: z.enum(['api', 'opt_out']).describe('`opt_out`: the caller asked on a call not to be called again'),
  call_id: z.string().nullable().describe('The call the caller opted out on'),
  created_at: timestamp,
});

const additionSchema = z.object({
  object: z.literal('dnc_addition'),
  added: z.number().int().describe('Numbers newly listed'),
  already_listed: z
    .number()
    .int()
    .describe('Valid numbers that were listed already (their first reason kept)'),
  rejected: z
    .array(z.object({ row: z.number().int(), value: z.string(), message: z.string() }))
    .describe('Entries not listed: `row` is the 1-based position in `numbers` (CSV: the data row)'),
});

const numberParams = z.object({ number: z.string().min(1).max(32).describe('E.164, e.g. +919876543210') });

const entryBody = (entry: DncEntry) => ({
  object: 'dnc_entry' as const,
  number: entry.number,
  reason: entry.reason,
  source: entry.source,
  call_id: entry.callId,
  created_at: isoTime(entry.createdAt),
});

const tag = 'Do-not-call list';

/**
 * `/v2/dnc`: the workspace's do-not-call list, which campaigns check right before each dial. Numbers come as
 * JSON or as a CSV file; invalid entries are reported by position and the valid ones listed, in one
 * transaction.
 */
export function registerDncRoutes(app: FastifyInstance, registry: RouteRegistry, list: DncList): void {
  // Encapsulated, so the CSV parser serves these routes only.
  app.register(async (scoped) => {
    registerCsvBodies(scoped, (rows) => ({ numbers: csvColumn(rows, CSV_NUMBER_COLUMNS) }));
    registerRoutes(scoped, registry, [
      addNumbersRoute(list),
      listNumbersRoute(list),
      getNumberRoute(list),
      removeNumberRoute(list),
    ]);
  });
}

const numbersBody = z
  .object({
    numbers: z
      .array(z.string().max(64))
      .min(1)
      .max(DNC_LIMITS.perRequest)
      .describe(`Up to ${DNC_LIMITS.perRequest} numbers in E.164 (+91 only); spaces and dashes are forgiven`),
    reason: reason.optional().describe('Why these numbers are listed'),
  })
  .strict();

function addNumbersRoute(list: DncList): RouteDefinition {
  return route({
    method: 'POST',
    url: '/dnc',
    operationId: 'addDncNumbers',
    summary:
      'Add numbers to the do-not-call list: JSON `{numbers, reason?}`, or `text/csv` with a `number` column (or numbers in the first column) and `?reason=`',
    tag,
    query: z
      .object({ reason: reason.optional().describe('For a CSV body: why its numbers are listed') })
      .strict(),
    body: numbersBody,
    responses: { 200: { description: 'What was listed and what was not', schema: additionSchema } },
    errors: ['invalid_request', 'body_too_large', 'campaigns_unavailable'],
    handler: async ({ auth, body, query, request }) => {
      const csv = isCsvRequest(request);
      if (!csv && query.reason !== undefined) {
        throw new ApiError('invalid_request', 'reason: with a JSON body, send it in the body');
      }
      const why = csv ? query.reason : body.reason;
      const addition = await list.add(auth.workspaceId, body.numbers, why ?? null);
      return {
        object: 'dnc_addition' as const,
        added: addition.added,
        already_listed: addition.alreadyListed,
        rejected: addition.rejected,
      };
    },
  });
}

function listNumbersRoute(list: DncList): RouteDefinition {
  return route({
    method: 'GET',
    url: '/dnc',
    operationId: 'listDncNumbers',
    summary: 'List the do-not-call list in number order (cursor-paginated)',
    tag,
    query: z
      .object({
        limit: pageLimit,
        starting_after: z.string().regex(INDIAN_E164, 'must be a listed number').optional(),
        cursor: pageCursor.optional(),
      })
      .strict(),
    responses: { 200: { description: 'A page of listed numbers', schema: listEnvelope(entrySchema) } },
    errors: ['invalid_request', 'campaigns_unavailable'],
    handler: async ({ auth, query }) => {
      const after = resolveKeyCursor(query, INDIAN_E164);
      const page = await list.list(auth.workspaceId, { limit: query.limit, ...(after ? { after } : {}) });
      return listBody(page.items.map(entryBody), page.hasMore, (entry) => entry.number);
    },
  });
}

function getNumberRoute(list: DncList): RouteDefinition {
  return route({
    method: 'GET',
    url: '/dnc/:number',
    operationId: 'getDncNumber',
    summary: 'Whether a number is on the do-not-call list: its entry, or 404 not_found',
    tag,
    params: numberParams,
    responses: { 200: { description: 'The entry', schema: entrySchema } },
    errors: ['invalid_request', 'not_found', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => entryBody(await list.get(auth.workspaceId, params.number)),
  });
}

function removeNumberRoute(list: DncList): RouteDefinition {
  return route({
    method: 'DELETE',
    url: '/dnc/:number',
    operationId: 'removeDncNumber',
    summary: 'Take a number off the do-not-call list; campaigns may dial it again',
    tag,
    params: numberParams,
    responses: {
      200: {
        description: 'Removed',
        schema: z.object({ object: z.literal('dnc_entry'), number: z.string(), deleted: z.literal(true) }),
      },
    },
    errors: ['invalid_request', 'not_found', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => ({
      object: 'dnc_entry' as const,
      number: await list.remove(auth.workspaceId, params.number),
      deleted: true as const,
    }),
  });
}

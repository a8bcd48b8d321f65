import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ApiError, invalid } from '../../core/errors.ts';
import type { IdempotencyRepo } from '../../core/store/types.ts';

/** How long a key's response is kept for replay (interface "Limits": 24-hour window). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1_000;
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1 to 255 visible ASCII characters. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The request's `Idempotency-Key`, undefined when absent; a malformed key is `400 invalid_request`. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[IDEMPOTENCY_HEADER.toLowerCase()];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_PATTERN.test(value)) {
    throw invalid(IDEMPOTENCY_HEADER, 'must be 1 to 255 visible ASCII characters, sent once');
  }
  return value;
}

/** JSON with object keys sorted at every level, so the same body always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** SHA-256 of method, path and canonical body: tells a retried request from another one under the same key. */
export function requestHash(request: { method: string; path: string; body: unknown }): string {
  return createHash('sha256')
    .update(`${request.method.toUpperCase()} ${request.path}\n${canonicalJson(request.body)}`)
    .digest('hex');
}

/** A JSON response as sent: the exact text, so a replay is byte for byte the original. */
export interface JsonResponse {
  status: number;
  text: string;
  /** Served from the stored response of an earlier request with the same key. */
  replayed: boolean;
}

export type ProduceResponse = () => Promise<{ status: number; body: unknown }>;

export async function freshResponse(produce: ProduceResponse): Promise<JsonResponse> {
  const { status, body } = await produce();
  return { status, text: JSON.stringify(body), replayed: false };
}

/**
 * Runs `produce` at most once per key within the window. The first request claims the key; a success is stored
 * and sent as the exact text stored. Any failure gives the key up again, so a request refused for a reason that
 * can change (402 before a top-up) can be retried with the same key. A duplicate while the first is running is
 * `409 duplicate_call`; a later one gets the stored response; a different request under a used key is a 400.
 */
export async function respondOnce(
  repo: IdempotencyRepo,
  claim: { workspaceId: string; key: string; requestHash: string },
  produce: ProduceResponse,
): Promise<JsonResponse> {
  const { workspaceId, key } = claim;
  const begun = await repo.begin({ ...claim, ttlMs: IDEMPOTENCY_WINDOW_MS });
  if (!begun.claimed) {
    const { record } = begun;
    if (record.requestHash !== claim.requestHash) {
      throw invalid(IDEMPOTENCY_HEADER, 'reused with a different request; use a new key for a new request');
    }
    if (record.status === 'in_flight' || record.responseStatus === null || record.responseBody === null) {
      throw new ApiError(
        'duplicate_call',
        'a request with this Idempotency-Key is still being processed; retry shortly to get its response',
      );
    }
    return { status: record.responseStatus, text: record.responseBody, replayed: true };
  }

  let response: JsonResponse;
  try {
    response = await freshResponse(produce);
  } catch (error) {
    // The request's own error is what the client must see; a claim that could not be given up expires anyway.
    await repo.abandon(workspaceId, key).catch(() => {});
    throw error;
  }
  // Once produced, the claim is kept even if storing fails: a retry then answers 409 instead of acting twice.
  await repo.complete(workspaceId, key, response.status, response.text, IDEMPOTENCY_WINDOW_MS);
  return response;
}

export function sendJsonResponse(reply: FastifyReply, response: JsonResponse): FastifyReply {
  if (response.replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.code(response.status).type('application/json; charset=utf-8').send(response.text);
}

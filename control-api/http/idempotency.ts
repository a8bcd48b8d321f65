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

/**
 * Keeps a response for replay through `repo`, a transaction's repository: called by a producer inside the
 * transaction of its effect, so that the effect and its stored response commit together or not at all.
 */
export type KeepResponse = (
  repo: IdempotencyRepo,
  response: { status: number; body: unknown },
) => Promise<void>;

export type ProduceResponse = (keep: KeepResponse) => Promise<{ status: number; body: unknown }>;

/** Without a key nothing is kept. */
const keepNothing: KeepResponse = async () => {};

export async function freshResponse(
  produce: ProduceResponse,
  keep: KeepResponse = keepNothing,
): Promise<JsonResponse> {
  const { status, body } = await produce(keep);
  return { status, text: JSON.stringify(body), replayed: false };
}

/** How often, and how many times, a claim that could not be given up (the store unreachable) is tried again. */
const ABANDON_RETRY_MS = 500;
const ABANDON_RETRIES = 60;

/**
 * Gives a failed request's claim up, trying again while the store is unreachable: a retry of the request meets
 * `duplicate_call` only until the store answers again, not for the claim's whole in-flight time.
 */
async function abandonClaim(
  repo: IdempotencyRepo,
  workspaceId: string,
  key: string,
  retries = ABANDON_RETRIES,
): Promise<void> {
  try {
    await repo.abandon(workspaceId, key);
  } catch {
    if (retries > 0)
      setTimeout(() => void abandonClaim(repo, workspaceId, key, retries - 1), ABANDON_RETRY_MS).unref();
  }
}

/**
 * Runs `produce` at most once per key within the window. The first request claims the key; a success is stored
 * and sent as the exact text stored. Any failure gives the key up again, so a request refused for a reason that
 * can change (402 before a top-up) can be retried with the same key. A duplicate while the first is running is
 * `409 duplicate_call`; a later one gets the stored response; a different request under a used key is a 400.
 *
 * A producer whose effect is a transaction stores the response inside it (`keep`). Otherwise a commit whose
 * acknowledgement is lost (the database connection cut as it commits) fails the request after its effect took
 * place: the key would be given up, and the client's retry would act a second time. Kept in the transaction, the
 * response is there exactly when the effect is, and giving up a key whose response is kept does nothing.
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

  let kept = false;
  const keep: KeepResponse = async (transactionRepo, { status, body }) => {
    await transactionRepo.complete(workspaceId, key, status, JSON.stringify(body), IDEMPOTENCY_WINDOW_MS);
    kept = true;
  };
  let response: JsonResponse;
  try {
    response = await freshResponse(produce, keep);
  } catch (error) {
    // The request's own error is what the client must see.
    await abandonClaim(repo, workspaceId, key);
    throw error;
  }
  // Once produced, the claim is kept even if storing fails: a retry then answers 409 instead of acting twice.
  if (!kept) await repo.complete(workspaceId, key, response.status, response.text, IDEMPOTENCY_WINDOW_MS);
  return response;
}

export function sendJsonResponse(reply: FastifyReply, response: JsonResponse): FastifyReply {
  if (response.replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.code(response.status).type('application/json; charset=utf-8').send(response.text);
}

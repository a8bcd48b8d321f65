import type { IdempotencyKeysTable } from '../db.ts';
import type { Scope } from '../scope.ts';
import type { IdempotencyRecord, IdempotencyRepo } from '../types.ts';

/** A claim can vanish (abandoned) between our insert and our read; then we try again, this many times. */
const BEGIN_ATTEMPTS = 5;
/**
 * How long an in-flight claim blocks its key. The API answers within 30 s, so a claim older than this belongs
 * to a request whose process died; a retry may then take the key over instead of waiting out the whole window.
 */
export const IN_FLIGHT_TTL_MS = 60_000;

function requirePositive(name: string, ms: number): void {
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new RangeError(`${name} must be positive`);
}

function toRecord(row: IdempotencyKeysTable): IdempotencyRecord {
  return {
    workspaceId: row.workspace_id,
    key: row.key,
    requestHash: row.request_hash,
    status: row.status,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/**
 * Idempotency-Key claims. Each step is one atomic statement, so concurrent `begin`s on one key are decided by
 * the database: the primary key lets exactly one insert win, and a conditional update lets exactly one
 * replace an expired record.
 */
export class IdempotencyStore implements IdempotencyRepo {
  constructor(private readonly scope: Scope) {}

  async begin(input: {
    workspaceId: string;
    key: string;
    requestHash: string;
    ttlMs: number;
    inFlightTtlMs?: number;
  }): Promise<{ claimed: true } | { claimed: false; record: IdempotencyRecord }> {
    requirePositive('ttlMs', input.ttlMs);
    const inFlightTtlMs = input.inFlightTtlMs ?? IN_FLIGHT_TTL_MS;
    requirePositive('inFlightTtlMs', inFlightTtlMs);
    const claimTtlMs = Math.min(inFlightTtlMs, input.ttlMs);
    const { db } = this.scope;
    for (let attempt = 0; attempt < BEGIN_ATTEMPTS; attempt++) {
      const now = this.scope.now;
      const fresh = {
        request_hash: input.requestHash,
        status: 'in_flight' as const,
        response_status: null,
        response_body: null,
        created_at: now,
        expires_at: now + claimTtlMs,
      };
      const inserted = await db
        .insertInto('idempotency_keys')
        .values({ workspace_id: input.workspaceId, key: input.key, ...fresh })
        .onConflict((oc) => oc.columns(['workspace_id', 'key']).doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 1n) return { claimed: true };

      const replaced = await db
        .updateTable('idempotency_keys')
        .set(fresh)
        .where('workspace_id', '=', input.workspaceId)
        .where('key', '=', input.key)
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      if (replaced.numUpdatedRows === 1n) return { claimed: true };

      const existing = await this.find(input.workspaceId, input.key);
      if (existing) return { claimed: false, record: existing };
    }
    throw new Error(`idempotency key ${input.key}: could not claim or read it`);
  }

  /** Keeps the response for replay until `ttlMs` after the claim (not after now: the window starts at the request). */
  async complete(
    workspaceId: string,
    key: string,
    responseStatus: number,
    responseBody: string,
    ttlMs: number,
  ): Promise<void> {
    requirePositive('ttlMs', ttlMs);
    await this.scope.db
      .updateTable('idempotency_keys')
      .set((eb) => ({
        status: 'done',
        response_status: responseStatus,
        response_body: responseBody,
        expires_at: eb('created_at', '+', ttlMs),
      }))
      .where('workspace_id', '=', workspaceId)
      .where('key', '=', key)
      .execute();
  }

  /** Deletes an in-flight claim; a completed record stays for replay. */
  async abandon(workspaceId: string, key: string): Promise<void> {
    await this.scope.db
      .deleteFrom('idempotency_keys')
      .where('workspace_id', '=', workspaceId)
      .where('key', '=', key)
      .where('status', '=', 'in_flight')
      .execute();
  }

  private async find(workspaceId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }
}

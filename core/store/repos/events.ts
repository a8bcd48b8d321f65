import type { EventsTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import type { AttemptOutcome, EventRecord, EventRepo, NewEvent, Page } from '../types.ts';

/** Longest `last_error` kept; a receiver's error text is only a hint for the operator. */
const LAST_ERROR_MAX_CHARS = 500;

function toEvent(row: EventsTable): EventRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    callId: row.call_id,
    type: row.type,
    createdAt: row.created_at,
    body: row.body,
    webhookUrl: row.webhook_url,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    toolTarget: row.tool_target ?? null,
    v1PublicKey: row.v1_public_key ?? null,
  };
}

function clip(error: string | null): string | null {
  return error === null ? null : error.slice(0, LAST_ERROR_MAX_CHARS);
}

/**
 * The transactional outbox. Events are appended in the transaction of the state change they describe and are
 * never rewritten: `body` stays byte for byte what was first stored. Delivery bookkeeping moves by conditional
 * UPDATEs, so an attempt is counted once even when two dispatchers overlap for a moment.
 */
export class EventStore implements EventRepo {
  constructor(private readonly scope: Scope) {}

  async append(event: NewEvent): Promise<EventRecord> {
    const deliverable = event.webhookUrl !== null;
    const row: EventsTable = {
      id: event.id,
      workspace_id: event.workspaceId,
      call_id: event.callId,
      type: event.type,
      created_at: event.createdAt,
      body: event.body,
      webhook_url: event.webhookUrl,
      status: deliverable ? 'pending' : 'none',
      attempts: 0,
      next_attempt_at: deliverable ? event.createdAt : null,
      last_status: null,
      last_error: null,
      delivered_at: null,
      ...(event.toolTarget !== undefined ? { tool_target: event.toolTarget } : {}),
      ...(event.v1PublicKey !== undefined ? { v1_public_key: event.v1PublicKey } : {}),
    };
    await this.scope.db.insertInto('events').values(row).execute();
    return toEvent(row);
  }

  async get(id: string): Promise<EventRecord | undefined> {
    const row = await this.scope.db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toEvent(row) : undefined;
  }

  async listForCall(workspaceId: string, callId: string): Promise<EventRecord[]> {
    const rows = await this.scope.db
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('call_id', '=', callId)
      .orderBy('id', 'asc')
      .execute();
    return rows.map(toEvent);
  }

  async due(now: number, limit: number): Promise<EventRecord[]> {
    const rows = await this.scope.db
      .selectFrom('events')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at', 'asc')
      .orderBy('id', 'asc')
      .limit(assertLimit(limit))
      .execute();
    return rows.map(toEvent);
  }

  async nextDueAt(): Promise<number | undefined> {
    const row = await this.scope.db
      .selectFrom('events')
      .select((eb) => eb.fn.min<number | null>('next_attempt_at').as('at'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
  }

  async recordAttempt(id: string, attempt: number, outcome: AttemptOutcome): Promise<boolean> {
    if (!Number.isSafeInteger(attempt) || attempt < 1) throw new RangeError('attempt must be 1 or more');
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable('events')
      .set(
        outcome.delivered
          ? {
              status: 'delivered',
              attempts: attempt,
              next_attempt_at: null,
              last_status: outcome.status,
              last_error: null,
              delivered_at: now,
            }
          : {
              status: outcome.retryAt === null ? 'dead' : 'pending',
              attempts: attempt,
              next_attempt_at: outcome.retryAt,
              last_status: outcome.status,
              last_error: clip(outcome.error),
            },
      )
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('attempts', '=', attempt - 1)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  async recordReplay(
    id: string,
    outcome: { delivered: boolean; status: number | null; error: string | null },
  ): Promise<void> {
    const now = this.scope.now;
    await this.scope.db
      .updateTable('events')
      .set(
        outcome.delivered
          ? {
              status: 'delivered',
              next_attempt_at: null,
              last_status: outcome.status,
              last_error: null,
              delivered_at: now,
            }
          : { last_status: outcome.status, last_error: clip(outcome.error) },
      )
      .where('id', '=', id)
      .where('status', '!=', 'none')
      .execute();
  }

  async listDead(options: {
    workspaceId?: string;
    limit: number;
    after?: string;
  }): Promise<Page<EventRecord>> {
    const limit = assertLimit(options.limit);
    const { workspaceId, after } = options;
    const rows = await this.scope.db
      .selectFrom('events')
      .selectAll()
      .where('status', '=', 'dead')
      .$if(workspaceId !== undefined, (q) => q.where('workspace_id', '=', workspaceId ?? ''))
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toEvent);
  }
}

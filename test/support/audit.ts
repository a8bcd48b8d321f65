/**
 * What a fault suite checks after the fact, read straight from the platform's PostgreSQL schema: the money,
 * calls and events invariants that must hold whatever happened to the processes and services meanwhile.
 */
import type { ReceivedRequest } from '../../core/events/testing/receiver.ts';

const LIVE = ['queued', 'dialing', 'in_progress'];
export const TERMINAL_EVENT_TYPES = ['call.completed', 'call.voicemail', 'call.failed', 'call.aborted'];

export interface AuditedCall {
  id: string;
  status: string;
  endedReason: string | null;
  costPaise: number;
  answeredAt: number | null;
  endedAt: number | null;
  gatewayNode: string | null;
}

export interface Audit {
  calls: AuditedCall[];
  /** Terminal events written per call id. */
  terminalEvents: Map<string, number>;
  /** Ledger debits (captures) per call id, and their sum. */
  captures: Map<string, number>;
  capturedPaise: number;
  balancePaise: number;
  heldPaise: number;
  /** Holds still `held`. */
  openHolds: number;
  /** Events by delivery status. */
  eventStatuses: Map<string, number>;
  /** Event id -> stored body, for comparing with what the receiver got. */
  eventBodies: Map<string, string>;
}

export async function auditWorkspace(
  databaseUrl: string,
  schema: string,
  workspaceId: string,
): Promise<Audit> {
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(`set search_path to "${schema.replaceAll('"', '')}"`);
    const calls = await db.query<{
      id: string;
      status: string;
      ended_reason: string | null;
      cost_paise: string;
      answered_at: string | null;
      ended_at: string | null;
      gateway_node: string | null;
    }>(
      'select id, status, ended_reason, cost_paise, answered_at, ended_at, gateway_node from calls where workspace_id = $1 order by id',
      [workspaceId],
    );
    const events = await db.query<{
      id: string;
      call_id: string | null;
      type: string;
      status: string;
      body: string;
    }>('select id, call_id, type, status, body from events where workspace_id = $1', [workspaceId]);
    const ledger = await db.query<{ reference: string; amount_paise: string }>(
      "select reference, amount_paise from wallet_ledger where workspace_id = $1 and reference like 'call_%'",
      [workspaceId],
    );
    const account = await db.query<{ balance_paise: string; held_paise: string }>(
      'select balance_paise, held_paise from wallet_accounts where workspace_id = $1',
      [workspaceId],
    );
    const holds = await db.query<{ n: string }>(
      "select count(*) as n from wallet_holds where workspace_id = $1 and status = 'held'",
      [workspaceId],
    );
    const terminalEvents = new Map<string, number>();
    const eventStatuses = new Map<string, number>();
    const eventBodies = new Map<string, string>();
    for (const event of events.rows) {
      eventBodies.set(event.id, event.body);
      eventStatuses.set(event.status, (eventStatuses.get(event.status) ?? 0) + 1);
      if (event.call_id && TERMINAL_EVENT_TYPES.includes(event.type))
        terminalEvents.set(event.call_id, (terminalEvents.get(event.call_id) ?? 0) + 1);
    }
    const captures = new Map<string, number>();
    let capturedPaise = 0;
    for (const entry of ledger.rows) {
      captures.set(entry.reference, (captures.get(entry.reference) ?? 0) + 1);
      capturedPaise -= Number(entry.amount_paise);
    }
    return {
      calls: calls.rows.map((c) => ({
        id: c.id,
        status: c.status,
        endedReason: c.ended_reason,
        costPaise: Number(c.cost_paise),
        answeredAt: c.answered_at === null ? null : Number(c.answered_at),
        endedAt: c.ended_at === null ? null : Number(c.ended_at),
        gatewayNode: c.gateway_node,
      })),
      terminalEvents,
      captures,
      capturedPaise,
      balancePaise: Number(account.rows[0]?.balance_paise ?? 0),
      heldPaise: Number(account.rows[0]?.held_paise ?? 0),
      openHolds: Number(holds.rows[0]?.n ?? 0),
      eventStatuses,
      eventBodies,
    };
  } finally {
    await db.end();
  }
}

/** Every invariant of a settled workspace that started with `startPaise`; returns the broken ones, in words. */
export function brokenInvariants(
  audit: Audit,
  startPaise: number,
  received: readonly ReceivedRequest[],
): string[] {
  const broken: string[] = [];
  for (const call of audit.calls) {
    if (LIVE.includes(call.status)) broken.push(`${call.id} is stuck ${call.status}`);
    const events = audit.terminalEvents.get(call.id) ?? 0;
    if (!LIVE.includes(call.status) && events !== 1) broken.push(`${call.id} has ${events} terminal events`);
    const captures = audit.captures.get(call.id) ?? 0;
    if (captures > 1) broken.push(`${call.id} was charged ${captures} times`);
    if ((captures === 1) !== call.costPaise > 0)
      broken.push(`${call.id} costs ${call.costPaise} paise but has ${captures} charges`);
  }
  const costs = audit.calls.reduce((sum, call) => sum + call.costPaise, 0);
  if (audit.capturedPaise !== costs) broken.push(`charged ${audit.capturedPaise} paise, calls cost ${costs}`);
  if (audit.balancePaise !== startPaise - costs)
    broken.push(`balance ${audit.balancePaise} paise, expected ${startPaise} - ${costs}`);
  if (audit.heldPaise !== 0 || audit.openHolds !== 0)
    broken.push(`${audit.heldPaise} paise still held in ${audit.openHolds} holds`);
  const pending = audit.eventStatuses.get('pending') ?? 0;
  if (pending > 0) broken.push(`${pending} events neither delivered nor dead-lettered`);
  const firstBody = new Map<string, string>();
  for (const request of received) {
    if (!request.id) continue;
    const body = request.raw.toString('utf8');
    const first = firstBody.get(request.id);
    if (first === undefined) firstBody.set(request.id, body);
    else if (first !== body) broken.push(`event ${request.id} was sent twice with different bodies`);
    const stored = audit.eventBodies.get(request.id);
    if (stored !== undefined && stored !== body)
      broken.push(`event ${request.id} was sent with a body not stored`);
  }
  return broken;
}

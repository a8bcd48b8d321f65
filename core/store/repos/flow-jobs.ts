import type { FlowJobsTable } from '../db.ts';
import {
  FLOW_JOB_KINDS,
  FLOW_JOB_STATUSES,
  type FlowJobKind,
  type FlowJobRecord,
  type FlowJobRepo,
  type FlowJobStatus,
} from '../flow-job-types.ts';
import type { Scope } from '../scope.ts';
import type { JsonObject } from '../values.ts';

const statusOf = (value: string): FlowJobStatus =>
  (FLOW_JOB_STATUSES as readonly string[]).includes(value) ? (value as FlowJobStatus) : 'failed';

const kindOf = (value: string): FlowJobKind =>
  (FLOW_JOB_KINDS as readonly string[]).includes(value) ? (value as FlowJobKind) : 'refine';

function toRecord(row: FlowJobsTable): FlowJobRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    kind: kindOf(row.kind),
    agentId: row.agent_id,
    status: statusOf(row.status),
    input: JSON.parse(row.input),
    state: JSON.parse(row.state),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until === null ? null : Number(row.lease_until),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
  };
}

/** Flow test jobs and their workers' claims. */
export class FlowJobStore implements FlowJobRepo {
  constructor(private readonly scope: Scope) {}

  create(
    job: {
      id: string;
      workspaceId: string;
      kind: FlowJobKind;
      agentId: string | null;
      input: JsonObject;
      state: JsonObject;
    },
    limit?: { perWindow: number; windowMs: number },
  ): Promise<{ job: FlowJobRecord } | { retryAfterMs: number }> {
    return this.scope.transaction(async ({ db, now, isPostgres }) => {
      if (limit && isPostgres) {
        // One start at a time per workspace, so two racing requests cannot both take the last place.
        await db
          .selectFrom('workspaces')
          .select('id')
          .where('id', '=', job.workspaceId)
          .forUpdate()
          .execute();
      }
      const recent = limit
        ? await db
            .selectFrom('flow_jobs')
            .select('created_at')
            .where('workspace_id', '=', job.workspaceId)
            .where('kind', '=', job.kind)
            .where('created_at', '>', now - limit.windowMs)
            .orderBy('created_at', 'desc')
            .limit(limit.perWindow)
            .execute()
        : [];
      if (limit && recent.length >= limit.perWindow) {
        const oldest = Number(recent[recent.length - 1]?.created_at ?? now);
        return { retryAfterMs: Math.max(1, oldest + limit.windowMs - now) };
      }
      const row: FlowJobsTable = {
        id: job.id,
        workspace_id: job.workspaceId,
        kind: job.kind,
        agent_id: job.agentId,
        status: 'running',
        input: JSON.stringify(job.input),
        state: JSON.stringify(job.state),
        lease_owner: null,
        lease_until: null,
        created_at: now,
        updated_at: now,
        ended_at: null,
      };
      await db.insertInto('flow_jobs').values(row).execute();
      return { job: toRecord(row) };
    });
  }

  async get(workspaceId: string, id: string, since: number): Promise<FlowJobRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('flow_jobs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('created_at', '>=', since)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async latestForAgent(
    workspaceId: string,
    agentId: string,
    since: number,
  ): Promise<FlowJobRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('flow_jobs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'refine')
      .where('agent_id', '=', agentId)
      .where('created_at', '>=', since)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async claimable(limit: number): Promise<string[]> {
    const now = this.scope.now;
    const rows = await this.scope.db
      .selectFrom('flow_jobs')
      .select('id')
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('created_at', 'asc')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  async claim(id: string, owner: string, leaseMs: number): Promise<FlowJobRecord | undefined> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable('flow_jobs')
      .set({ lease_owner: owner, lease_until: now + leaseMs })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return undefined;
    const row = await this.scope.db
      .selectFrom('flow_jobs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async saveState(id: string, owner: string, state: JsonObject, leaseMs: number): Promise<boolean> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable('flow_jobs')
      .set({ state: JSON.stringify(state), updated_at: now, lease_until: now + leaseMs })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  async renew(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable('flow_jobs')
      .set({ lease_until: now + leaseMs })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  async release(id: string, owner: string): Promise<void> {
    await this.scope.db
      .updateTable('flow_jobs')
      .set({ lease_until: null })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_owner', '=', owner)
      .execute();
  }

  async finish(
    id: string,
    owner: string | null,
    status: Exclude<FlowJobStatus, 'running'>,
    state: JsonObject,
  ): Promise<boolean> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable('flow_jobs')
      .set({ status, state: JSON.stringify(state), updated_at: now, ended_at: now, lease_until: null })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .$if(owner !== null, (q) => q.where('lease_owner', '=', owner ?? ''))
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  async deleteStartedBefore(before: number): Promise<number> {
    const result = await this.scope.db
      .deleteFrom('flow_jobs')
      .where('created_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

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
import { LeasedJobs } from './leased-jobs.ts';

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
  private readonly jobs: LeasedJobs<'flow_jobs', FlowJobRecord>;

  constructor(private readonly scope: Scope) {
    this.jobs = new LeasedJobs(scope, 'flow_jobs', ['running'], toRecord);
  }

  create(
    job: Parameters<FlowJobRepo['create']>[0],
    limit?: Parameters<FlowJobRepo['create']>[1],
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

  get(workspaceId: string, id: string, since: number): Promise<FlowJobRecord | undefined> {
    return this.jobs.get(workspaceId, id, since);
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

  claimable(limit: number): Promise<string[]> {
    return this.jobs.claimable(limit);
  }

  claim(id: string, owner: string, leaseMs: number): Promise<FlowJobRecord | undefined> {
    return this.jobs.claim(id, owner, leaseMs);
  }

  saveState(id: string, owner: string, state: JsonObject, leaseMs: number): Promise<boolean> {
    return this.jobs.renew(id, owner, leaseMs, (now) => ({ state: JSON.stringify(state), updated_at: now }));
  }

  renew(id: string, owner: string, leaseMs: number): Promise<boolean> {
    return this.jobs.renew(id, owner, leaseMs);
  }

  release(id: string, owner: string): Promise<void> {
    return this.jobs.release(id, owner);
  }

  finish(
    id: string,
    owner: string | null,
    status: Exclude<FlowJobStatus, 'running'>,
    state: JsonObject,
  ): Promise<boolean> {
    return this.jobs.finish(id, owner, () => ({ status, state: JSON.stringify(state) }));
  }

  async deleteStartedBefore(before: number): Promise<number> {
    const result = await this.scope.db
      .deleteFrom('flow_jobs')
      .where('created_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

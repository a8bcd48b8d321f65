import { rowId } from '../keys.ts';
import type { Scope } from '../scope.ts';
import type { ToolRunRecord, ToolRunRepo, ToolRunStatus } from '../tool-types.ts';
import type { CallVariables } from '../types.ts';

/** Runs of tools on calls, appended by whichever process ran them. */
export class ToolRunStore implements ToolRunRepo {
  constructor(private readonly scope: Scope) {}

  async record(workspaceId: string, callId: string, run: ToolRunRecord): Promise<void> {
    await this.scope.db
      .insertInto('call_tool_runs')
      .values({
        id: rowId(run.startedAt),
        workspace_id: workspaceId,
        call_id: callId,
        name: run.name,
        phase: run.phase,
        status: run.status,
        http_status: run.httpStatus,
        started_at: run.startedAt,
        duration_ms: Math.max(0, Math.round(run.durationMs)),
      })
      .execute();
  }

  async setCallVariables(workspaceId: string, callId: string, variables: CallVariables): Promise<void> {
    await this.scope.db
      .updateTable('calls')
      .set({ variables: JSON.stringify(variables) })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', callId)
      .execute();
  }

  async forCall(workspaceId: string, callId: string): Promise<ToolRunRecord[]> {
    const rows = await this.scope.db
      .selectFrom('call_tool_runs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('call_id', '=', callId)
      .orderBy('id', 'asc')
      .execute();
    return rows.map((r) => ({
      name: r.name,
      phase: r.phase,
      status: r.status as ToolRunStatus,
      httpStatus: r.http_status === null ? null : Number(r.http_status),
      startedAt: Number(r.started_at),
      durationMs: Number(r.duration_ms),
    }));
  }
}

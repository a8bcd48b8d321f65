import { isoTime } from '../clock.ts';
import type { Store, ToolRunRecord } from '../store/types.ts';

/** One entry of a call's `tool_calls`: no bodies, no secret values. (A type, so it spreads into events.) */
export type ToolCallEntry = {
  name: string;
  phase: string;
  started_at: string;
  duration_ms: number;
  status: ToolRunRecord['status'];
  http_status: number | null;
};

export const toolCallEntry = (run: ToolRunRecord): ToolCallEntry => ({
  name: run.name,
  phase: run.phase,
  started_at: isoTime(run.startedAt),
  duration_ms: run.durationMs,
  status: run.status,
  http_status: run.httpStatus,
});

/** The call's tool runs so far, in the order they started. */
export async function toolCallsOf(
  store: Store,
  workspaceId: string,
  callId: string,
): Promise<ToolCallEntry[]> {
  return (await store.toolRuns.forCall(workspaceId, callId)).map(toolCallEntry);
}

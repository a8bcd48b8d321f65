import { storedTools } from '../agents/stored.ts';
import { isoTime } from '../clock.ts';
import type { DeliveryResult } from '../events/delivery.ts';
import type { ToolTargets } from '../events/replay.ts';
import { newId } from '../ids.ts';
import type { CallRecord, EventRecord, NewEvent, Repositories, Store } from '../store/types.ts';
import { secretsOf } from './definition.ts';
import type { SecretSource } from './runner.ts';
import { renderTemplate, type TemplateValues } from './template.ts';

export const POST_CALL_EVENT_TYPE = 'tool.post_call';

interface Target {
  agent_id: string;
  revision: number;
  tool: string;
}

/**
 * post_call tools: when a call settles, one outbox row per tool of its agent revision, written in the
 * settlement's transaction, whose body is `{id, type: "tool.post_call", created_at, data: {tool, call,
 * transcript, analysis}}`. The webhook dispatcher delivers them like webhooks (signed with X-Service-Signature,
 * retried on its schedule, dead-lettered, replayable); their URL and headers are rendered from the tool's
 * templates at each attempt, so the outbox never holds a secret value.
 */
export class PostCallTools implements ToolTargets {
  constructor(
    private readonly deps: {
      store: Store;
      secrets: SecretSource;
      /** The call's transcript turns, when kept (the gateway keeps them before it settles). */
      readTranscript?: (workspaceId: string, callId: string) => Promise<unknown>;
    },
  ) {}

  /** The outbox rows of a call that just settled (inside its settlement transaction). */
  async eventsFor(
    repos: Repositories,
    call: CallRecord,
    callObject: object,
    now: number,
  ): Promise<NewEvent[]> {
    const revision = await repos.agents.getRevision(call.workspaceId, call.agentId, call.agentRevision);
    const tools = storedTools(revision).filter((t) => t.phase === 'post_call');
    if (tools.length === 0) return [];
    const transcript =
      (await this.deps.readTranscript?.(call.workspaceId, call.id).catch(() => null)) ?? null;
    return tools.map((tool) => {
      const id = newId('event', now);
      const target: Target = { agent_id: call.agentId, revision: call.agentRevision, tool: tool.name };
      return {
        id,
        workspaceId: call.workspaceId,
        callId: call.id,
        type: POST_CALL_EVENT_TYPE,
        createdAt: now,
        body: JSON.stringify({
          id,
          type: POST_CALL_EVENT_TYPE,
          created_at: isoTime(now),
          data: { tool: tool.name, call: callObject, transcript, analysis: call.analysis },
        }),
        // The URL template (no values in it); the target is rendered at each attempt.
        webhookUrl: tool.request.url,
        toolTarget: JSON.stringify(target),
      };
    });
  }

  async resolve(event: EventRecord): Promise<{ url: string; headers: Record<string, string> }> {
    const target = JSON.parse(event.toolTarget ?? '{}') as Target;
    const { store } = this.deps;
    const call = event.callId ? await store.calls.get(event.workspaceId, event.callId) : undefined;
    const revision = await store.agents.getRevision(event.workspaceId, target.agent_id, target.revision);
    const tool = storedTools(revision).find((t) => t.name === target.tool && t.phase === 'post_call');
    if (!call || !tool) throw new Error('the post_call tool or its call is gone');
    const values: TemplateValues = {
      secrets: await this.deps.secrets.reveal(event.workspaceId, secretsOf(tool)),
      variables: Object.fromEntries(
        Object.entries(call.variables).map(([k, v]) => [k, v === null ? '' : String(v)]),
      ),
      call: { id: call.id, to: call.toNumber ?? '' },
      agent: { id: call.agentId },
    };
    const headers: Record<string, string> = {};
    for (const [name, template] of Object.entries(tool.request.headers)) {
      headers[name.toLowerCase()] = renderTemplate(template, values, 'header');
    }
    return { url: renderTemplate(tool.request.url, values, 'url'), headers };
  }

  async recordAttempt(event: EventRecord, result: DeliveryResult, startedAt: number, durationMs: number) {
    if (!event.callId) return;
    const target = JSON.parse(event.toolTarget ?? '{}') as Target;
    await this.deps.store.toolRuns.record(event.workspaceId, event.callId, {
      name: target.tool,
      phase: 'post_call',
      status: result.ok ? 'succeeded' : result.error.startsWith('timeout') ? 'timeout' : 'failed',
      httpStatus: result.status,
      startedAt,
      durationMs,
    });
  }
}

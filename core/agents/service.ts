import { ApiError, invalid, notFound } from '../errors.ts';
import { isInternalHostName } from '../net/address-policy.ts';
import type { AgentRecord, AgentRevisionRecord, Page, Store } from '../store/types.ts';
import { type ToolRules, validateTools } from '../tools/definition.ts';
import { applyPatch, settingsFromInput } from './settings.ts';
import { settingsJson, storedSettings } from './stored.ts';
import type { AgentInput, AgentPatch, AgentSettings, VoiceDirectory } from './types.ts';

export interface Agent {
  id: string;
  revision: number;
  settings: AgentSettings;
  createdAt: number;
  updatedAt: number;
}

export interface AgentRevision {
  agentId: string;
  revision: number;
  reason: AgentRevisionRecord['reason'];
  restoredFrom: number | null;
  settings: AgentSettings;
  createdAt: number;
}

const toAgent = (r: AgentRecord): Agent => ({
  id: r.id,
  revision: r.revision,
  settings: storedSettings(r.content),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

const toRevision = (r: AgentRevisionRecord): AgentRevision => ({
  agentId: r.agentId,
  revision: r.revision,
  reason: r.reason,
  restoredFrom: r.restoredFrom,
  settings: storedSettings(r.content),
  createdAt: r.createdAt,
});

/** Every save checks the tools as a whole (a rollback too: the secrets an old revision names may be gone). */
function withCheckedTools(settings: AgentSettings, rules: ToolRules): AgentSettings {
  checkWebhookUrl(settings.webhook_url, rules.allowPrivate);
  const checked = validateTools(settings.tools, rules);
  if (!checked.ok) throw new ApiError('invalid_tools', 'invalid tools', { details: checked.details });
  return { ...settings, tools: checked.tools };
}

/** The agent's webhook target, like a call's: never a loopback or private address unless the operator allows. */
function checkWebhookUrl(url: string | undefined, allowPrivate: boolean | undefined): void {
  if (url === undefined || allowPrivate) return;
  if (isInternalHostName(new URL(url).hostname)) {
    throw invalid('webhook_url', 'points at a loopback or private address; use a public HTTPS endpoint');
  }
}

/**
 * Agents and their revisions. Every save (update, flow, rollback, publish) is one new revision written in the
 * same transaction as the head; `ifRevision` refuses a save based on a stale read with `409 conflict`.
 */
export class AgentService {
  constructor(
    private readonly store: Store,
    private readonly voices: VoiceDirectory,
    /** What tool definitions are checked against (the workspace's secrets, the address policy). */
    private readonly toolRules: (workspaceId: string) => Promise<ToolRules>,
    /** Whether the workspace has a phone pool (`calls_from.pool_id`); without it no pool exists. */
    private readonly poolExists: (workspaceId: string, poolId: string) => Promise<boolean> = async () =>
      false,
  ) {}

  async create(workspaceId: string, input: AgentInput): Promise<Agent> {
    await this.checkPool(workspaceId, input.calls_from?.pool_id);
    const settings = withCheckedTools(
      settingsFromInput(input, this.voices),
      await this.toolRules(workspaceId),
    );
    return toAgent(await this.store.agents.create(workspaceId, settingsJson(settings)));
  }

  async get(workspaceId: string, id: string): Promise<Agent> {
    const record = await this.store.agents.get(workspaceId, id);
    if (!record) throw notFound(`agent ${id}`);
    return toAgent(record);
  }

  async list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<Agent>> {
    const page = await this.store.agents.list(workspaceId, options);
    return { items: page.items.map(toAgent), hasMore: page.hasMore };
  }

  async update(workspaceId: string, id: string, patch: AgentPatch, ifRevision?: number): Promise<Agent> {
    await this.checkPool(workspaceId, patch.calls_from?.pool_id);
    return this.save(workspaceId, id, 'update', ifRevision, (current) =>
      applyPatch(current, patch, this.voices),
    );
  }

  /** `PUT /v2/agents/{id}/flow`: replaces the graph only; turns a single-prompt agent into a node-based one. */
  saveFlow(workspaceId: string, id: string, flow: unknown, ifRevision?: number): Promise<Agent> {
    return this.save(workspaceId, id, 'flow', ifRevision, (current) =>
      applyPatch(current, { flow: flow ?? {} }, this.voices),
    );
  }

  /** A new revision whose settings are those of `revision`. */
  async rollback(workspaceId: string, id: string, revision: number, ifRevision?: number): Promise<Agent> {
    const target = await this.store.agents.getRevision(workspaceId, id, revision);
    if (!target) {
      await this.get(workspaceId, id);
      throw notFound(`revision ${revision} of agent ${id}`);
    }
    await this.checkPool(workspaceId, storedSettings(target.content).calls_from?.pool_id);
    return this.save(workspaceId, id, 'rollback', ifRevision, () => storedSettings(target.content), revision);
  }

  /** Publishes a draft agent: a new revision with `draft: false`. Publishing a published agent is a conflict. */
  publish(workspaceId: string, id: string, ifRevision?: number): Promise<Agent> {
    return this.save(workspaceId, id, 'publish', ifRevision, (current) => {
      if (!current.draft)
        throw new ApiError('conflict', `agent ${id} is not a draft; it is already published`);
      return { ...current, draft: false };
    });
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    if (!(await this.store.agents.softDelete(workspaceId, id))) throw notFound(`agent ${id}`);
  }

  async revisions(
    workspaceId: string,
    id: string,
    options: { limit: number; before?: number },
  ): Promise<Page<AgentRevision>> {
    const page = await this.store.agents.listRevisions(workspaceId, id, options);
    if (!page) throw notFound(`agent ${id}`);
    return { items: page.items.map(toRevision), hasMore: page.hasMore };
  }

  async revision(workspaceId: string, id: string, revision: number): Promise<AgentRevision> {
    const record = await this.store.agents.getRevision(workspaceId, id, revision);
    if (!record) {
      await this.get(workspaceId, id);
      throw notFound(`revision ${revision} of agent ${id}`);
    }
    return toRevision(record);
  }

  private async checkPool(workspaceId: string, poolId: string | undefined): Promise<void> {
    if (poolId !== undefined && !(await this.poolExists(workspaceId, poolId))) {
      throw new ApiError('not_found', `calls_from.pool_id: phone pool "${poolId}" not found`);
    }
  }

  private async save(
    workspaceId: string,
    id: string,
    reason: AgentRevisionRecord['reason'],
    ifRevision: number | undefined,
    change: (current: AgentSettings) => AgentSettings,
    restoredFrom?: number,
  ): Promise<Agent> {
    const rules = await this.toolRules(workspaceId);
    const result = await this.store.agents.save(workspaceId, id, {
      reason,
      ...(ifRevision !== undefined ? { ifRevision } : {}),
      ...(restoredFrom !== undefined ? { restoredFrom } : {}),
      change: (current) => settingsJson(withCheckedTools(change(storedSettings(current.content)), rules)),
    });
    if (result === 'not_found') throw notFound(`agent ${id}`);
    if (result === 'conflict') {
      throw new ApiError(
        'conflict',
        `agent ${id} changed since revision ${ifRevision}; read its current revision and retry`,
      );
    }
    return toAgent(result);
  }
}

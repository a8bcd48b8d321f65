import { applyPatch, settingsFromInput } from '../agents/settings.ts';
import { settingsJson, storedSettings } from '../agents/stored.ts';
import type { VoiceDirectory } from '../agents/types.ts';
import { type Clock, systemClock } from '../clock.ts';
import { ApiError, notFound } from '../errors.ts';
import { isId } from '../ids.ts';
import type { AgentRecord, Repositories, Store } from '../store/types.ts';
import type { ToolRules } from '../tools/definition.ts';
import {
  type AssistantDocument,
  type CreateAssistantBody,
  documentFromInput,
  mergeDocument,
  storedDocument,
  type UpdateAssistantBody,
} from './assistant.ts';
import { DOCUMENT_LIMITS } from './documents.ts';
import { checkedTools, type V1Integrations } from './integrations.ts';
import { type Assistant, agentInputOf, assistantOf, type DocumentText, type V1Voices } from './mapping.ts';

/** Interface "Limits, v1": updates of one assistant have a cooldown so that two cannot overlap. */
export const ASSISTANT_UPDATE_COOLDOWN_MS = 30_000;
/** The list answers every assistant of the workspace at once (it takes no query); past this many, the newest. */
export const ASSISTANT_LIST_LIMIT = 500;

export type AssistantVoices = V1Voices & VoiceDirectory;

/**
 * v1 assistants over v2 agents: an assistant is an agent (same id), its v1-only fields kept beside it. Each write
 * saves the agent (a new revision) and the v1 document in one transaction.
 */
export class V1Assistants {
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly voices: AssistantVoices,
    private readonly integrations: V1Integrations,
    private readonly toolRules: (workspaceId: string) => Promise<ToolRules>,
    clock?: Clock,
  ) {
    this.clock = clock ?? systemClock;
  }

  /** The agent settings an assistant compiles to, with the tools its integrations name (checked as v2 does). */
  private async compiled(repos: Repositories, workspaceId: string, doc: AssistantDocument, rules: ToolRules) {
    const tools = await this.integrations.resolve(repos, workspaceId, doc.agent.tools);
    const texts = await documentTexts(repos, workspaceId, [doc]);
    return { ...agentInputOf(doc, this.voices, texts), tools: checkedTools(tools, rules, 'agent.tools') };
  }

  async create(workspaceId: string, body: CreateAssistantBody): Promise<Assistant> {
    const doc = documentFromInput(body);
    const rules = await this.toolRules(workspaceId);
    const record = await this.store.transaction(async (repos) => {
      const input = await this.compiled(repos, workspaceId, doc, rules);
      const settings = settingsFromInput(input, this.voices);
      const agent = await repos.agents.create(workspaceId, settingsJson(settings));
      await repos.v1.putAssistant({ workspaceId, agentId: agent.id, document: { ...doc } });
      return { agent, texts: await documentTexts(repos, workspaceId, [doc]) };
    });
    return this.present(record.agent, doc, record.texts);
  }

  async get(workspaceId: string, id: string): Promise<Assistant> {
    const agent = isId('agent', id) ? await this.store.agents.get(workspaceId, id) : undefined;
    if (!agent) throw notFound(`assistant ${id}`);
    const stored = await this.store.v1.assistant(workspaceId, id);
    const doc = stored ? storedDocument(stored.document) : undefined;
    return this.present(agent, doc, await documentTexts(this.store, workspaceId, doc ? [doc] : []));
  }

  async list(workspaceId: string): Promise<Assistant[]> {
    const page = await this.store.agents.list(workspaceId, { limit: ASSISTANT_LIST_LIMIT });
    const docs = new Map(
      (
        await this.store.v1.assistants(
          workspaceId,
          page.items.map((a) => a.id),
        )
      ).map((r) => [r.agentId, storedDocument(r.document)]),
    );
    const texts = await documentTexts(this.store, workspaceId, [...docs.values()]);
    return page.items.map((agent) => this.present(agent, docs.get(agent.id), texts));
  }

  /** Merges the update into the document, re-derives the agent from it; `429` inside the cooldown. */
  async update(workspaceId: string, id: string, body: UpdateAssistantBody): Promise<Assistant> {
    const current = await this.get(workspaceId, id);
    const rules = await this.toolRules(workspaceId);
    const result = await this.store.transaction(async (repos) => {
      await this.claim(repos, workspaceId, id);
      const doc = mergeDocument(documentOf(current), body);
      const input = await this.compiled(repos, workspaceId, doc, rules);
      const saved = await repos.agents.save(workspaceId, id, {
        reason: 'update',
        change: (record) => settingsJson(applyPatch(storedSettings(record.content), input, this.voices)),
      });
      if (saved === 'not_found' || saved === 'conflict') throw notFound(`assistant ${id}`);
      await repos.v1.putAssistant({ workspaceId, agentId: id, document: { ...doc } });
      return { saved, doc, texts: await documentTexts(repos, workspaceId, [doc]) };
    });
    return this.present(result.saved, result.doc, result.texts);
  }

  /** Archives (or restores) the assistant: `archivedAt`; an archived assistant places no calls. */
  async setArchived(workspaceId: string, id: string, archivedAt: string | null): Promise<Assistant> {
    const current = await this.get(workspaceId, id);
    const doc = { ...documentOf(current), archivedAt };
    const saved = await this.store.transaction(async (repos) => {
      const record = await repos.agents.save(workspaceId, id, {
        reason: 'update',
        change: (r) => settingsJson({ ...storedSettings(r.content), archived: archivedAt !== null }),
      });
      if (record === 'not_found' || record === 'conflict') throw notFound(`assistant ${id}`);
      await repos.v1.putAssistant({ workspaceId, agentId: id, document: { ...doc } });
      return record;
    });
    return this.present(saved, doc);
  }

  private async claim(repos: Repositories, workspaceId: string, id: string): Promise<void> {
    if (await repos.v1.claimUpdate(workspaceId, id, ASSISTANT_UPDATE_COOLDOWN_MS)) return;
    const last = await repos.v1.assistant(workspaceId, id);
    const waitMs = last ? last.updatedAt + ASSISTANT_UPDATE_COOLDOWN_MS - this.clock.now() : 1_000;
    const waitSecs = Math.max(1, Math.ceil(waitMs / 1_000));
    throw new ApiError(
      'rate_limited',
      `assistant ${id} was updated less than ${ASSISTANT_UPDATE_COOLDOWN_MS / 1_000} seconds ago; retry in ${waitSecs} seconds`,
      { retryAfterSecs: waitSecs },
    );
  }

  private present(
    agent: AgentRecord,
    doc: AssistantDocument | undefined,
    texts: readonly DocumentText[] = [],
  ): Assistant {
    return assistantOf(
      { id: agent.id, settings: storedSettings(agent.content), createdAt: agent.createdAt },
      doc,
      this.voices,
      texts,
    );
  }
}

/** The uploaded texts of the documents these assistants name (one query). */
async function documentTexts(
  repos: Pick<Repositories, 'v1'>,
  workspaceId: string,
  docs: readonly AssistantDocument[],
): Promise<DocumentText[]> {
  const urls = [...new Set(docs.flatMap((d) => d.knowledgeBase.documents.map((k) => k.url)))];
  if (urls.length === 0) return [];
  return repos.v1.documents(workspaceId, { limit: DOCUMENT_LIMITS.perWorkspace, urls });
}

/** The document part of an assistant as read (what an update merges into). */
function documentOf(assistant: Assistant): AssistantDocument {
  const { _id, createdAt, ...doc } = assistant;
  void _id;
  void createdAt;
  return doc;
}

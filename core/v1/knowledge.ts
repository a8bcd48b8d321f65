import type { Store } from '../store/types.ts';
import { storedDocument } from './assistant.ts';
import { DOCUMENT_LIMITS } from './documents.ts';
import { knowledgePassages } from './mapping.ts';
import { PassageIndex, TURN_RETRIEVAL } from './retrieval.ts';

/** Knowledge retrieved for one caller turn at a time. */
export interface CallKnowledge {
  /** How many passages the call may be given (those not already in its prompt). */
  readonly passages: number;
  passagesFor(question: string): string[];
}

/**
 * The knowledge base of the assistant a call runs, for per-turn retrieval: every FAQ and uploaded-document
 * passage that its prompt does not already hold, indexed for BM25. Undefined when the agent is no v1 assistant or
 * its prompt holds all of its knowledge base.
 */
export async function callKnowledge(
  store: Pick<Store, 'v1'>,
  workspaceId: string,
  agentId: string,
  systemPrompt: string,
): Promise<CallKnowledge | undefined> {
  const record = await store.v1.assistant(workspaceId, agentId);
  if (!record) return undefined;
  const doc = storedDocument(record.document);
  const urls = doc.knowledgeBase.documents.map((d) => d.url);
  const texts =
    urls.length > 0
      ? await store.v1.documents(workspaceId, { limit: DOCUMENT_LIMITS.perWorkspace, urls })
      : [];
  const missing = knowledgePassages(doc, texts).filter((p) => !systemPrompt.includes(p));
  if (missing.length === 0) return undefined;
  const index = new PassageIndex(missing);
  return {
    passages: index.size,
    passagesFor: (question) => index.search(question, TURN_RETRIEVAL.passages, TURN_RETRIEVAL.chars),
  };
}

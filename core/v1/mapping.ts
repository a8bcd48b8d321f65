import type { AgentInput, AgentPatch, AgentSettings } from '../agents/types.ts';
import { AGENT_LIMITS } from '../agents/types.ts';
import { isoTime } from '../clock.ts';
import { invalid } from '../errors.ts';
import type { AssistantDocument } from './assistant.ts';
import { splitPassages } from './retrieval.ts';
import { compilePrompt, defaultFirstMessage, languageOf } from './variants.ts';

/** Voices as the mapping needs them: known ids, and a default by language and gender. */
export interface V1Voices {
  get(id: string): { id: string; languages: readonly string[] } | undefined;
  pick(language: string, gender: 'male' | 'female'): string | undefined;
}

/** The v1 Assistant as the API returns it (interface "Assistant (v1)"). */
export type Assistant = { _id: string } & AssistantDocument & { createdAt: string };

/** What the prompt says when the knowledge base does not fit in it (README "Knowledge base"). */
export const KNOWLEDGE_PER_TURN_NOTE =
  'More of the knowledge base is given to you with each caller turn, under "Knowledge base passages for this turn": answer from it when it has the answer.';

/**
 * Everything an assistant's knowledge base says, as passages: each FAQ as `Q: ...\nA: ...`; each document as its
 * uploaded text cut into passages (`[title] ...`), or, not uploaded, one line naming it.
 */
export function knowledgePassages(doc: AssistantDocument, texts: readonly DocumentText[]): string[] {
  const { faq, documents } = doc.knowledgeBase;
  return [
    ...faq.map((item) => `Q: ${item.question}\nA: ${item.answer}`),
    ...documents.flatMap((document) => {
      const uploaded = texts.find((t) => t.url === document.url);
      return uploaded
        ? splitPassages(uploaded.text).map((text) => `[${uploaded.title}] ${text}`)
        : [`Reference document: ${document.title} (${document.url})`];
    }),
  ];
}

/**
 * The knowledge base as the prompt holds it, within `budgetChars`: all of it when it fits; else the FAQs in the
 * order written (the first win) and the documents that were not uploaded, as fit, and a note that the rest comes
 * per caller turn (`callKnowledge` retrieves it during calls; see README "Knowledge base").
 */
export function knowledgeSection(
  doc: AssistantDocument,
  budgetChars: number,
  texts: readonly DocumentText[] = [],
): string {
  const passages = knowledgePassages(doc, texts);
  if (passages.length === 0) return '';
  const heading = 'Facts you may use to answer (say you will check if the answer is not here):';
  const whole = [heading, ...passages].join('\n');
  if (whole.length <= budgetChars) return whole;
  const lines = [heading];
  let used = heading.length + KNOWLEDGE_PER_TURN_NOTE.length + 1;
  if (used > budgetChars) return '';
  for (const passage of passages) {
    if (passage.startsWith('[')) continue;
    if (used + passage.length + 1 > budgetChars) continue;
    lines.push(passage);
    used += passage.length + 1;
  }
  lines.push(KNOWLEDGE_PER_TURN_NOTE);
  return lines.join('\n');
}

/** An uploaded knowledge-base document's text, for the prompts of the assistants that name its URL. */
export interface DocumentText {
  url: string;
  title: string;
  text: string;
}

function systemPrompt(doc: AssistantDocument, texts: readonly DocumentText[]): string {
  const base = compilePrompt(doc, '');
  const room = AGENT_LIMITS.systemPromptChars - base.length - 2;
  if (room < 0)
    throw invalid(
      'agent.systemPrompt',
      `too long once the variant's brief is added (${-room} characters over)`,
    );
  return compilePrompt(doc, knowledgeSection(doc, room, texts));
}

/**
 * The v2 agent settings an assistant stands for, field by field (README "Legacy v1", "Assistant to agent"):
 * name; the compiled prompt (identity, variant brief with its config, `agent.systemPrompt`, knowledge base);
 * `firstMessage` (or the variant's opening); `endMessage` -> `end_call.message`; `identity.voice` (or a voice of
 * the language and gender) -> `voice.voice_id`; `icpContext.language` -> `language`; `maxCallDuration` ->
 * `max_duration_secs`; `analysisPlan` -> `analysis`; `archivedAt` -> `archived`.
 */
export function agentInputOf(
  doc: AssistantDocument,
  voices: V1Voices,
  texts: readonly DocumentText[] = [],
): AgentInput & AgentPatch {
  const { language } = languageOf(doc.icpContext.language);
  const voiceId = doc.agent.identity.voice || voices.pick(language, doc.agent.identity.gender);
  if (doc.agent.identity.voice && !voices.get(doc.agent.identity.voice)) {
    throw invalid('agent.identity.voice', `unknown voice "${doc.agent.identity.voice}"; see GET /v1/voices`);
  }
  const analysis = doc.analysisPlan;
  const analysed = Boolean(analysis.summaryPlan || analysis.successCriteriaPlan);
  return {
    name: doc.name,
    system_prompt: systemPrompt(doc, texts),
    first_message: doc.agent.firstMessage || defaultFirstMessage(doc),
    language,
    ...(voiceId ? { voice: { voice_id: voiceId, language } } : {}),
    max_duration_secs: doc.callSettings.maxCallDuration,
    end_call: { enabled: true, message: doc.agent.endMessage },
    archived: doc.archivedAt !== null,
    analysis: {
      enabled: analysed,
      ...(analysis.summaryPlan ? { summary_prompt: analysis.summaryPlan } : {}),
      ...(analysis.successCriteriaPlan ? { success_criteria: analysis.successCriteriaPlan } : {}),
    },
  };
}

/**
 * The assistant an agent is: its v1 document (or, for an agent made in v2, one derived from it), with the fields
 * that meet a v2 setting read from the agent, so an edit made in v2 shows in v1.
 */
export function assistantOf(
  agent: { id: string; settings: AgentSettings; createdAt: number },
  doc: AssistantDocument | undefined,
  voices: V1Voices,
  texts: readonly DocumentText[] = [],
): Assistant {
  const s = agent.settings;
  const base = doc ?? derivedDocument(s);
  const compiled = doc ? agentInputOf(doc, voices, texts) : undefined;
  // What the client left empty stays empty while the agent still has what the assistant compiled to.
  const kept = <T>(written: T, compiledTo: T | undefined, now: T): T =>
    compiled !== undefined && now === compiledTo ? written : now;
  return {
    _id: agent.id,
    ...base,
    name: s.name,
    agent: {
      ...base.agent,
      identity: {
        ...base.agent.identity,
        voice: kept(base.agent.identity.voice, compiled?.voice?.voice_id, s.voice.voice_id),
      },
      firstMessage: kept(base.agent.firstMessage, compiled?.first_message, s.first_message),
      systemPrompt: kept(base.agent.systemPrompt, compiled?.system_prompt, s.system_prompt),
      endMessage: s.end_call.message,
    },
    icpContext: {
      ...base.icpContext,
      language: kept(base.icpContext.language, compiled?.language, s.language),
    },
    callSettings: { ...base.callSettings, maxCallDuration: s.max_duration_secs },
    analysisPlan: {
      ...base.analysisPlan,
      summaryPlan: s.analysis.summary_prompt ?? '',
      successCriteriaPlan: s.analysis.success_criteria ?? '',
    },
    archivedAt: s.archived ? (base.archivedAt ?? isoTime(agent.createdAt)) : null,
    createdAt: isoTime(agent.createdAt),
  };
}

/** An agent made in v2 read as an assistant: an order confirmation with the agent's own prompt. */
function derivedDocument(s: AgentSettings): AssistantDocument {
  return {
    name: s.name,
    variant: { type: 'order_confirmation', config: {} },
    agent: {
      identity: { name: '', gender: 'female', voice: s.voice.voice_id },
      systemPrompt: s.system_prompt,
      firstMessage: s.first_message,
      endMessage: s.end_call.message,
      tools: [],
    },
    telephony: { inbound: '', outbound: '' },
    icpContext: { targetAgeGroups: [], locationTiers: [], language: s.language, targetAudience: [] },
    callSettings: {
      slots: [],
      retryProtocol: {
        maxAttemptsNoPickup: 0,
        maxAttemptsLowEngagement: 0,
        reAttemptPeriod: 0,
        maxRescheduleCount: 0,
      },
      maxCallDuration: s.max_duration_secs,
      concurrentCallCount: 1,
    },
    analysisPlan: {
      successCriteriaPlan: s.analysis.success_criteria ?? '',
      summaryPlan: s.analysis.summary_prompt ?? '',
      callInsightPlan: {},
    },
    knowledgeBase: { documents: [], faq: [] },
    archivedAt: null,
    timezone: 'Asia/Kolkata',
  };
}

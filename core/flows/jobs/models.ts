/**
 * The language models flow jobs run on, and one metered request to them. The composition root builds the set
 * from the settings (README "Flow tests"); core only takes their interface.
 */
import type { ChatRequest, LanguageModel, ToolCall, Usage } from '../../../engines/llm/types.ts';
import { DEFAULT_FLOW_JOB_MODEL, type FlowJobModel } from './stored.ts';

export interface HostedModel {
  readonly llm: LanguageModel;
  readonly usdPerMillion: readonly [number, number];
}

export interface FlowModelSet {
  /** The reviewing models by request name; undefined when not configured. */
  readonly reviewing: Readonly<Record<FlowJobModel, HostedModel | undefined>>;
  /** The model live calls run on (`LLM_*`), when it is a language model (not the scripted engine). */
  readonly live: LanguageModel | undefined;
  /** Each request, from sending to its last word. */
  readonly timeoutMs: number;
}

/** A deployment with no model for flow jobs: every route answers `503 model_unavailable`. */
export const NO_FLOW_MODELS: FlowModelSet = {
  reviewing: {
    'provider1-3.8-flash': undefined,
    'provider2-opus-5.5': undefined,
    'provider3-6-sol': undefined,
  },
  live: undefined,
  timeoutMs: 1,
};

/** The setting that names each reviewing model. */
export const MODEL_SETTING: Record<FlowJobModel, string> = {
  'provider1-3.8-flash': 'FLOW_FLASH_MODEL',
  'provider2-opus-5.5': 'FLOW_OPUS_MODEL',
  'provider3-6-sol': 'FLOW_SOL_MODEL',
};

/**
 * Why a job on `model` cannot run here (the setting to set), or undefined. Simulated turns need the live-call
 * model or, failing that, the default reviewing model.
 */
export function missingModelSetting(
  models: FlowModelSet,
  model: FlowJobModel,
  simulates: boolean,
): string | undefined {
  if (!models.reviewing[model]) {
    return `the model ${model} is not configured: set ${MODEL_SETTING[model]} (and FLOW_*_BASE_URL, FLOW_*_API_KEY when it is not served where LLM_BASE_URL points)`;
  }
  if (simulates && !models.live && !models.reviewing[DEFAULT_FLOW_JOB_MODEL]) {
    return `simulated calls need a language model: set LLM_PROVIDER=openai with LLM_MODEL, or ${MODEL_SETTING[DEFAULT_FLOW_JOB_MODEL]}`;
  }
  return undefined;
}

export interface Answer {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage | undefined;
}

/** One whole answer within the deadline; aborting `signal` (a canceled job) aborts it. */
export async function ask(
  llm: LanguageModel,
  request: Omit<ChatRequest, 'signal'>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Answer> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const answer: Answer = { text: '', toolCalls: [], usage: undefined };
  let finished = false;
  for await (const event of llm.chat({ ...request, signal: combined })) {
    if (event.type === 'text') answer.text += event.text;
    else if (event.type === 'tool_call') answer.toolCalls.push(event.call);
    else {
      finished = true;
      answer.usage = event.usage;
    }
  }
  if (!finished) {
    throw new Error(deadline.aborted ? `the model did not answer within ${timeoutMs} ms` : 'aborted');
  }
  return answer;
}

/** The JSON object in a model's answer (a fenced block or the outermost braces), or undefined. */
export function jsonObjectIn(text: string): Record<string, unknown> | undefined {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1];
  for (const candidate of [fenced, text]) {
    if (candidate === undefined) continue;
    const start = candidate.indexOf('{');
    const end = candidate.lastIndexOf('}');
    if (start < 0 || end <= start) continue;
    try {
      const value: unknown = JSON.parse(candidate.slice(start, end + 1));
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        return value as Record<string, unknown>;
      }
    } catch {
      // not JSON: try the next candidate
    }
  }
  return undefined;
}

/**
 * Post-call analysis: one Chat Completions request over the finished call's transcript that writes a summary,
 * a success verdict and the agent's structured data fields. It never throws: a timeout, an engine error or an
 * answer that is not the asked-for JSON gives `status: 'failed'` with `error`. The scripted dialog engine is not
 * a language model, so with it nothing is generated: the analysis says so and keeps only what the flow extracted.
 */
import type { LanguageModel } from '../../engines/llm/types.ts';
import type { AgentSettings, AnalysisField } from '../agents/types.ts';
import type { TranscriptEntry } from './artifacts.ts';

export type StructuredValue = string | number | boolean | null;

/** The `analysis` object of a call. */
export type CallAnalysis = {
  status: 'completed' | 'failed' | 'skipped';
  summary: string | null;
  success: { passed: boolean | null; reason: string | null };
  /** One entry per field of the agent's `analysis.structured_data`; null when the call did not tell. */
  structured_data: Record<string, StructuredValue>;
  /** The flow's extraction variables the call collected. */
  extracted: Record<string, unknown>;
  /** `provider:model` that wrote it, or `none`. */
  model: string;
  error?: string;
  generated_at: string;
};

export interface AnalyzeCallOptions {
  llm: LanguageModel;
  settings: AgentSettings;
  transcript: readonly TranscriptEntry[];
  extracted: Readonly<Record<string, unknown>>;
  /** Cancels the request; the analysis then fails. */
  signal?: AbortSignal;
  /** The whole request, from sending to the last word. */
  timeoutMs: number;
  now?: () => number;
}

export const DEFAULT_SUMMARY_PROMPT =
  'Summarise the call in 2-3 sentences: what the caller wanted, what the agent did, and how the call ended.';
export const DEFAULT_SUCCESS_CRITERIA =
  "The call is a success when the agent achieved the goal its instructions set out, or fully handled the caller's request.";
export const NO_MODEL_REASON = 'no language model is configured for analysis';
/** The most of the transcript sent (its end, where outcomes are): well inside any current context window. */
export const TRANSCRIPT_CHARS_MAX = 40_000;
const INSTRUCTIONS_CHARS_MAX = 8_000;
const EXTRACTED_CHARS_MAX = 4_000;
/** Enough for a summary, a reason and 20 short fields. */
const REPLY_TOKENS_MAX = 1_500;
const OMITTED_MARKER = '[the start of the call is left out]';

export async function analyzeCall(options: AnalyzeCallOptions): Promise<CallAnalysis> {
  const { llm, settings, transcript } = options;
  const fields = settings.analysis.structured_data ?? [];
  const now = options.now ?? Date.now;
  const written = (analysis: Omit<CallAnalysis, 'extracted' | 'generated_at'>): CallAnalysis => ({
    status: analysis.status,
    summary: analysis.summary,
    success: analysis.success,
    structured_data: analysis.structured_data,
    extracted: { ...options.extracted },
    model: analysis.model,
    ...(analysis.error !== undefined ? { error: analysis.error } : {}),
    generated_at: new Date(now()).toISOString(),
  });
  const nothing = {
    summary: null,
    success: { passed: null, reason: null },
    structured_data: emptyFields(fields),
  };
  if (!transcript.some((entry) => entry.text.trim() !== '' || entry.recognized === false)) {
    return written({ ...nothing, status: 'skipped', model: 'none' });
  }
  if (llm.provider === 'scripted') {
    return written({
      ...nothing,
      status: 'completed',
      model: 'none',
      success: { passed: null, reason: NO_MODEL_REASON },
    });
  }
  const model = `${llm.provider}:${llm.model}`;
  const asked = await askModel(llm, analysisPrompt(options), options);
  if ('error' in asked) return written({ ...nothing, status: 'failed', model, error: asked.error });
  const answer = firstJsonObject(asked.text);
  if (answer === undefined || !looksLikeAnalysis(answer)) {
    const error = 'the model did not answer with the analysis JSON object';
    return written({ ...nothing, status: 'failed', model, error });
  }
  return written({
    status: 'completed',
    model,
    summary: nonEmptyString(answer.summary),
    success: successOf(answer.success),
    structured_data: fieldsOf(answer.structured_data, fields),
  });
}

/** The system prompt: what to write, then the agent's instructions and what the call collected as context. */
export function analysisPrompt(options: Pick<AnalyzeCallOptions, 'settings' | 'extracted'>): string {
  const { analysis } = options.settings;
  const fields = analysis.structured_data ?? [];
  const lines = [
    'You analyse a finished phone call between an AI voice agent (AGENT) and a caller (CALLER).',
    'Answer with ONE JSON object and nothing else, of this shape:',
    '{"summary": string, "success": {"passed": boolean, "reason": string}, "structured_data": {...}}',
    '',
    `summary: ${analysis.summary_prompt?.trim() || DEFAULT_SUMMARY_PROMPT}`,
    `success: ${analysis.success_criteria?.trim() || DEFAULT_SUCCESS_CRITERIA} Set "passed" to true or false and give the reason in one sentence.`,
  ];
  if (fields.length === 0) {
    lines.push('structured_data: an empty object {}.');
  } else {
    lines.push(
      'structured_data: an object with exactly these keys, each value of the given type, or null when the call does not tell:',
      ...fields.map((field) => `- ${field.name} (${field.type}): ${field.description}`),
    );
  }
  const instructions = agentInstructions(options.settings);
  if (instructions !== '') {
    lines.push('', "The agent's instructions:", '"""', clip(instructions, INSTRUCTIONS_CHARS_MAX), '"""');
  }
  if (Object.keys(options.extracted).length > 0) {
    lines.push(
      '',
      'Values the agent collected during the call:',
      clip(JSON.stringify(options.extracted), EXTRACTED_CHARS_MAX),
    );
  }
  return lines.join('\n');
}

/** How a caller turn without recognised words (`recognized: false`) reads in the transcript the model sees. */
export const UNRECOGNIZED_SPEECH_LINE = '[unrecognised speech]';

/** The transcript as `AGENT:`/`CALLER:` lines, at most `TRANSCRIPT_CHARS_MAX` characters of its end. */
export function transcriptText(transcript: readonly TranscriptEntry[]): string {
  const text = transcript
    .map((entry) => ({
      ...entry,
      text: entry.recognized === false ? UNRECOGNIZED_SPEECH_LINE : entry.text.replace(/\s+/g, ' ').trim(),
    }))
    .filter((entry) => entry.text !== '')
    .map(
      (entry) =>
        `${entry.speaker === 'agent' ? 'AGENT' : 'CALLER'}: ${entry.text}${entry.interrupted ? ' [interrupted]' : ''}`,
    )
    .join('\n');
  if (text.length <= TRANSCRIPT_CHARS_MAX) return text;
  const tail = text.slice(text.length - (TRANSCRIPT_CHARS_MAX - OMITTED_MARKER.length - 1));
  // Start at a whole line when the cut fell inside one (a single huge line is kept cut).
  const lineStart = tail.indexOf('\n');
  return `${OMITTED_MARKER}\n${lineStart >= 0 ? tail.slice(lineStart + 1) : tail}`;
}

/** A single-prompt agent's system prompt, or a flow agent's global persona and rules. */
function agentInstructions(settings: AgentSettings): string {
  const global = settings.flow?.nodes.find((node) => node.type === 'globalNode')?.data.prompt ?? '';
  return [settings.system_prompt.trim(), global.trim()].filter((part) => part !== '').join('\n\n');
}

async function askModel(
  llm: LanguageModel,
  system: string,
  options: AnalyzeCallOptions,
): Promise<{ text: string } | { error: string }> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stop();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<{ error: string }>((resolve) => {
    timer = setTimeout(() => {
      stop();
      resolve({ error: `the analysis timed out after ${options.timeoutMs} ms` });
    }, options.timeoutMs);
  });
  const reply = (async (): Promise<{ text: string } | { error: string }> => {
    let text = '';
    let finished = false;
    const stream = llm.chat({
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: `The call's transcript:\n${transcriptText(options.transcript)}` },
      ],
      temperature: 0,
      maxTokens: REPLY_TOKENS_MAX,
      signal: controller.signal,
    });
    for await (const event of stream) {
      if (event.type === 'text') text += event.text;
      else if (event.type === 'done') finished = true;
    }
    // A stream ends without `done` only when it was aborted.
    return finished ? { text } : { error: 'the analysis was cancelled' };
  })().catch((error: unknown) => ({ error: `the language model failed: ${messageOf(error)}` }));
  try {
    // The race bounds the wait even for an engine that does not stop when its signal is aborted.
    return await Promise.race([reply, timedOut]);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
  }
}

/** The first balanced `{...}` in the text that parses as a JSON object (models wrap JSON in prose or fences). */
export function firstJsonObject(text: string): Record<string, unknown> | undefined {
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    const end = balancedEnd(text, start);
    if (end < 0) continue;
    try {
      const value: unknown = JSON.parse(text.slice(start, end + 1));
      if (isRecord(value)) return value;
    } catch {
      // Not JSON from this brace: try the next one.
    }
  }
  return undefined;
}

/** Index of the brace closing the one at `start`, skipping braces inside strings; -1 when it never closes. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return i;
  }
  return -1;
}

function looksLikeAnalysis(answer: Record<string, unknown>): boolean {
  return (
    typeof answer.summary === 'string' ||
    isRecord(answer.success) ||
    typeof answer.success === 'boolean' ||
    isRecord(answer.structured_data)
  );
}

function successOf(value: unknown): CallAnalysis['success'] {
  if (isRecord(value)) return { passed: asBoolean(value.passed), reason: nonEmptyString(value.reason) };
  return { passed: asBoolean(value), reason: null };
}

function fieldsOf(value: unknown, fields: readonly AnalysisField[]): Record<string, StructuredValue> {
  const given = isRecord(value) ? value : {};
  const out: Record<string, StructuredValue> = {};
  for (const field of fields) out[field.name] = coerce(given[field.name], field.type);
  return out;
}

function emptyFields(fields: readonly AnalysisField[]): Record<string, StructuredValue> {
  return Object.fromEntries(fields.map((field) => [field.name, null]));
}

/** The value as the field's type when it plainly is one ("42" is a number, "yes" a boolean); otherwise null. */
export function coerce(value: unknown, type: AnalysisField['type']): StructuredValue {
  switch (type) {
    case 'string':
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      if (typeof value === 'boolean') return String(value);
      return nonEmptyString(value);
    case 'number':
      return asNumber(value);
    case 'boolean':
      return asBoolean(value);
  }
}

function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const plain = value.trim().replace(/,/g, '');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(plain)) return null;
  const number = Number(plain);
  return Number.isFinite(number) ? number : null;
}

const TRUE_WORDS = new Set(['true', 'yes', 'passed', 'pass', 'success', 'successful']);
const FALSE_WORDS = new Set(['false', 'no', 'failed', 'fail', 'failure', 'unsuccessful']);

function asBoolean(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  const word = value.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return null;
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import { ApiError } from '../errors.ts';
import { validateFlow } from '../flows/validate.ts';
import {
  AGENT_LIMITS,
  type AgentInput,
  type AgentPatch,
  type AgentSettings,
  type AnalysisSettings,
  DEFAULT_BEHAVIOR,
  DEFAULT_END_CALL,
  DEFAULT_LANGUAGE,
  type VoiceDirectory,
} from './types.ts';

/** Object-valued settings that a PATCH merges into instead of replacing. */
const MERGED_OBJECTS = [
  'voice',
  'end_call',
  'voicemail',
  'background_sound',
  'behavior',
  'analysis',
] as const;
/** Settings a PATCH may clear with `null`. */
const CLEARABLE = ['flow', 'calls_from', 'webhook_url'] as const;

/** A new agent's settings: the input over the defaults, then checked as a whole. */
export function settingsFromInput(input: AgentInput, voices: VoiceDirectory): AgentSettings {
  const language = input.language ?? DEFAULT_LANGUAGE;
  const { flow, voice, ...rest } = input;
  const draft: Record<string, unknown> = {
    draft: false,
    archived: false,
    system_prompt: '',
    first_message: '',
    language,
    secondary_languages: [],
    max_duration_secs: AGENT_LIMITS.defaultDurationSecs,
    end_call: { ...DEFAULT_END_CALL },
    voicemail: { action: 'hangup' },
    background_sound: { sound: 'off' },
    behavior: { ...DEFAULT_BEHAVIOR },
    analysis: { enabled: false },
    tools: [],
    ...withoutUndefined(rest),
  };
  for (const key of MERGED_OBJECTS) {
    const given = (rest as Record<string, unknown>)[key];
    if (given && key !== 'voice')
      draft[key] = { ...(defaultsOf(key) as object), ...withoutUndefined(given as object) };
  }
  draft.voice = resolveVoice(voice, language, voices);
  if (flow !== undefined && flow !== null) draft.flow = flow;
  return checkSettings(draft as unknown as AgentSettings, voices);
}

/** The current settings with a patch applied, then checked as a whole. */
export function applyPatch(current: AgentSettings, patch: AgentPatch, voices: VoiceDirectory): AgentSettings {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null && (CLEARABLE as readonly string[]).includes(key)) {
      delete next[key];
    } else if (
      (MERGED_OBJECTS as readonly string[]).includes(key) &&
      value !== null &&
      typeof value === 'object'
    ) {
      next[key] = { ...(next[key] as object), ...withoutUndefined(value as object) };
    } else {
      next[key] = value;
    }
  }
  if (patch.voice?.voice_id !== undefined && patch.voice.language === undefined) {
    // A new voice without a language speaks the agent's language.
    (next.voice as { language: string }).language = (next.language as string) ?? current.language;
  }
  return checkSettings(next as unknown as AgentSettings, voices);
}

/**
 * The analysis settings as kept: an empty prompt or field list means "use the default" and is left out, so a
 * PATCH can clear one with `""` or `[]`. Field names must be unique: they become the keys of `structured_data`.
 */
function checkedAnalysis(analysis: AnalysisSettings): AnalysisSettings {
  const { enabled, summary_prompt, success_criteria, structured_data } = analysis;
  const seen = new Set<string>();
  for (const [i, field] of (structured_data ?? []).entries()) {
    if (seen.has(field.name)) {
      throw new ApiError(
        'invalid_request',
        `analysis.structured_data[${i}].name: duplicate field name "${field.name}"`,
      );
    }
    seen.add(field.name);
  }
  return {
    enabled,
    ...(summary_prompt?.trim() ? { summary_prompt } : {}),
    ...(success_criteria?.trim() ? { success_criteria } : {}),
    ...(structured_data && structured_data.length > 0 ? { structured_data } : {}),
  };
}

function defaultsOf(key: (typeof MERGED_OBJECTS)[number]): unknown {
  switch (key) {
    case 'end_call':
      return { ...DEFAULT_END_CALL };
    case 'voicemail':
      return { action: 'hangup' };
    case 'background_sound':
      return { sound: 'off' };
    case 'behavior':
      return { ...DEFAULT_BEHAVIOR };
    case 'analysis':
      return { enabled: false };
    case 'voice':
      return {};
  }
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function resolveVoice(
  voice: AgentInput['voice'],
  language: string,
  voices: VoiceDirectory,
): { voice_id: string; language: string } {
  if (voice) return { voice_id: voice.voice_id, language: voice.language ?? language };
  const fallback = voices.defaultFor(language);
  if (!fallback) {
    throw new ApiError(
      'invalid_request',
      `voice: no voice of the catalogue speaks "${language}"; set voice.voice_id`,
    );
  }
  return { voice_id: fallback.id, language };
}

/** Rules that span fields; throws the spec's error for the first broken one. */
function checkSettings(settings: AgentSettings, voices: VoiceDirectory): AgentSettings {
  const voice = voices.get(settings.voice.voice_id);
  if (!voice) {
    throw new ApiError(
      'invalid_request',
      `voice.voice_id: unknown voice "${settings.voice.voice_id}" (see GET /v2/voices)`,
    );
  }
  if (!voice.languages.includes(settings.voice.language)) {
    throw new ApiError(
      'invalid_request',
      `voice.language: voice "${voice.id}" does not speak "${settings.voice.language}" (it speaks ${voice.languages.join(', ')})`,
    );
  }
  if (settings.voicemail.action === 'leave_message' && !settings.voicemail.message?.trim()) {
    throw new ApiError(
      'invalid_request',
      'voicemail.message: is required when voicemail.action is leave_message',
    );
  }
  // Tools are checked as a whole by the agent service (core/tools), which knows the workspace's secrets.
  settings.analysis = checkedAnalysis(settings.analysis);
  if (settings.flow !== undefined) {
    const checked = validateFlow(settings.flow, settings.tools);
    if (!checked.ok) throw new ApiError('invalid_flow', 'invalid flow', { details: checked.details });
    settings.flow = checked.flow;
  }
  // calls_from.pool_id is checked by the agent service, which knows the workspace's pools.
  return settings;
}

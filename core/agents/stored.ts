import { z } from 'zod';
import type { JsonObject } from '../store/values.ts';
import {
  type AgentSettings,
  ANALYSIS_FIELD_TYPES,
  BACKGROUND_SOUNDS,
  DEFAULT_BEHAVIOR,
  DEFAULT_END_CALL,
  INTERRUPTION_MODES,
  NODE_TYPES,
  TOOL_METHODS,
  TOOL_PHASES,
  type ToolDefinition,
  VOICEMAIL_ACTIONS,
} from './types.ts';

/**
 * Agent settings as the agents repository stores them (a head's or a revision's content): their zod schema,
 * which is also the API's representation of an agent, and the one decoder of stored agent JSON. Limits are
 * not checked here: only validated settings are ever saved (core/agents/settings.ts on every save).
 */

/** A tool definition as saved (see README "Tools and secrets"); the request body takes the same shape. */
export const toolSchema = z
  .object({
    name: z.string().describe('^[a-z][a-z0-9_]{0,63}$, unique in the agent'),
    phase: z.enum(TOOL_PHASES),
    description: z.string().optional().describe('What the model reads; required for on_call'),
    parameters: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('on_call only: JSON Schema of the arguments'),
    request: z.object({
      method: z.enum(TOOL_METHODS),
      url: z.string().describe('Template; starts with a literal https://host'),
      headers: z.record(z.string(), z.string()).describe('Values are templates'),
      body: z.unknown().optional().describe('Any JSON; its strings are templates (not on post_call tools)'),
    }),
    timeout_ms: z.number().int().min(100).max(10_000),
    filler_after_ms: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .optional()
      .describe(
        'on_call only: while the tool runs longer than this, the agent says a short "one moment" line in its language; 0 (never) or 200-10,000, default 1,000',
      ),
  })
  .describe(
    'Templates: {{ args.<name> }} (on_call), {{ secrets.<name> }}, {{ variables.<name> }}, {{ call.id }}, {{ call.to }}, {{ agent.id }}',
  );

const flowNode = z.object({
  id: z.string(),
  type: z.enum(NODE_TYPES),
  data: z.object({
    name: z.string(),
    prompt: z.string(),
    greeting: z.string().optional(),
    is_start: z.boolean(),
    allow_interrupt: z.boolean(),
    add_global_prompt: z.boolean(),
    extraction_enabled: z.boolean(),
    extraction_variables: z.array(z.object({ name: z.string(), type: z.string(), prompt: z.string() })),
    tools: z.array(z.string()),
    silence_reprompt_secs: z.number().int().optional(),
    silence_reprompt_message: z.string().optional(),
  }),
});
const flowEdge = z.object({
  id: z.string(),
  source: z.string(),
  target: z.string(),
  data: z.object({ label: z.string(), condition: z.string() }),
});
export const flowSchema = z.object({ nodes: z.array(flowNode), edges: z.array(flowEdge) });

const endCall = z.object({
  enabled: z.boolean(),
  message: z.string(),
  confirm: z.boolean(),
  after_silence_reprompts: z.number().int(),
});

const behavior = z.object({
  interruptions: z.enum(INTERRUPTION_MODES),
  adaptive_interruptions: z.boolean(),
  min_interrupt_ms: z.number().int(),
  min_words: z.number().int(),
  endpointing_ms: z.number().int(),
  silence_reprompt_secs: z.number().int(),
  silence_reprompt_message: z.string(),
  dnc_on_opt_out: z.boolean(),
  speculative_replies: z.boolean(),
});

export const agentSettingsSchema = z.object({
  name: z.string(),
  draft: z.boolean(),
  archived: z.boolean(),
  system_prompt: z.string(),
  first_message: z.string(),
  language: z.string(),
  secondary_languages: z.array(z.string()),
  voice: z.object({ voice_id: z.string(), language: z.string() }),
  max_duration_secs: z.number().int(),
  end_call: endCall,
  voicemail: z.object({ action: z.enum(VOICEMAIL_ACTIONS), message: z.string().optional() }),
  background_sound: z.object({ sound: z.enum(BACKGROUND_SOUNDS) }),
  behavior,
  analysis: z.object({
    enabled: z.boolean(),
    summary_prompt: z.string().optional(),
    success_criteria: z.string().optional(),
    structured_data: z
      .array(z.object({ name: z.string(), type: z.enum(ANALYSIS_FIELD_TYPES), description: z.string() }))
      .optional(),
  }),
  tools: z.array(toolSchema),
  flow: flowSchema.optional(),
  calls_from: z.object({ pool_id: z.string() }).optional(),
  webhook_url: z.string().optional(),
});

/**
 * The schema and `AgentSettings` name the same settings: a setting added to one and not the other fails the
 * typecheck here (z.object drops keys it does not know, so a setting missing from the schema would be lost).
 */
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;
const schemaNamesEverySetting: SameKeys<z.output<typeof agentSettingsSchema>, AgentSettings> = true;
void schemaNamesEverySetting;

/** Object settings added since a revision was saved take their defaults when it is read. */
const storedSettingsSchema = agentSettingsSchema.extend({
  end_call: endCall
    .partial()
    .optional()
    .transform((given) => ({ ...DEFAULT_END_CALL, ...given })),
  behavior: behavior
    .partial()
    .optional()
    .transform((given) => ({ ...DEFAULT_BEHAVIOR, ...given })),
});

/** Stored agent JSON that does not have the settings' shape: the store holds something no save wrote. */
export class StoredSettingsError extends Error {
  constructor(issue: z.core.$ZodIssue | undefined) {
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    super(`stored agent settings do not decode: ${where}${issue?.message ?? ''}`);
    this.name = 'StoredSettingsError';
  }
}

/**
 * The one decoder of stored agent JSON (a head or a revision, as the agents repository returns it): every
 * reader of an agent's settings goes through here, so an older agent behaves, reads and patches like a new one.
 */
export function storedSettings(content: unknown): AgentSettings {
  const decoded = storedSettingsSchema.safeParse(content);
  if (!decoded.success) throw new StoredSettingsError(decoded.error.issues[0]);
  return decoded.data;
}

/** The tools of a stored head or revision (none when there is none): every reader of stored tools. */
export function storedTools(record: { readonly content: unknown } | undefined): ToolDefinition[] {
  return record ? storedSettings(record.content).tools : [];
}

/** Settings as the agents repository stores them: the encoder matching `storedSettings`. */
export function settingsJson(settings: AgentSettings): JsonObject {
  return { ...settings };
}

import { z } from 'zod';
import { agentSettingsSchema } from '../../core/agents/stored.ts';
import {
  AGENT_LIMITS,
  ANALYSIS_FIELD_TYPES,
  BACKGROUND_SOUNDS,
  INTERRUPTION_MODES,
  VOICEMAIL_ACTIONS,
} from '../../core/agents/types.ts';
import { webhookUrl } from './call.ts';
import { ifRevision, timestamp } from './common.ts';

const language = z
  .string()
  .max(35)
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language code such as hi-IN');

const voice = z.object({ voice_id: z.string().min(1).max(100), language: language.optional() }).strict();

/** 0 turns re-prompts off; anything shorter than the minimum would talk over a caller who is thinking. */
const silenceRepromptSecs = z
  .number()
  .int()
  .min(0)
  .max(AGENT_LIMITS.maxSilenceRepromptSecs)
  .refine(
    (secs) => secs === 0 || secs >= AGENT_LIMITS.minSilenceRepromptSecs,
    `must be 0 (off) or ${AGENT_LIMITS.minSilenceRepromptSecs}-${AGENT_LIMITS.maxSilenceRepromptSecs}`,
  );
const silenceRepromptMessage = z.string().max(AGENT_LIMITS.silenceRepromptMessageChars);

const endCall = z
  .object({
    enabled: z.boolean().optional(),
    message: z.string().max(AGENT_LIMITS.endCallMessageChars).optional(),
    confirm: z.boolean().optional(),
    after_silence_reprompts: z.number().int().min(0).max(AGENT_LIMITS.maxSilenceReprompts).optional(),
  })
  .strict();

const voicemail = z
  .object({
    action: z.enum(VOICEMAIL_ACTIONS).optional(),
    message: z.string().max(AGENT_LIMITS.voicemailMessageChars).optional(),
  })
  .strict();

const behavior = z
  .object({
    interruptions: z.enum(INTERRUPTION_MODES).optional(),
    adaptive_interruptions: z.boolean().optional(),
    min_interrupt_ms: z.number().int().min(100).max(3000).optional(),
    min_words: z.number().int().min(0).max(10).optional(),
    endpointing_ms: z.number().int().min(100).max(5000).optional(),
    silence_reprompt_secs: silenceRepromptSecs.optional(),
    silence_reprompt_message: silenceRepromptMessage.optional(),
    dnc_on_opt_out: z
      .boolean()
      .optional()
      .describe(
        'default true: a caller who clearly asks not to be called again (English, Hindi, Hinglish) is put on the do-not-call list (reason opt_out, with the call id); the agent acknowledges and ends the call',
      ),
    speculative_replies: z
      .boolean()
      .optional()
      .describe(
        "default true: the reply starts (model request, speech of its first clause) as soon as the caller stops and the speech-to-text has their words, while the end of the turn is still being decided; it plays the moment the turn ends with the same words, and is discarded unheard (requests aborted, nothing in the transcript, recording, events or the model's history) when the caller goes on. Not for text that calls for more ('and', 'aur'). Costs the discarded model requests",
      ),
  })
  .strict();

const analysisField = z
  .object({
    name: z
      .string()
      .regex(
        new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${AGENT_LIMITS.analysisFieldNameChars - 1}}$`),
        `must be an identifier of at most ${AGENT_LIMITS.analysisFieldNameChars} characters (letters, digits and _, not starting with a digit)`,
      ),
    type: z.enum(ANALYSIS_FIELD_TYPES),
    description: z.string().max(AGENT_LIMITS.analysisFieldDescriptionChars),
  })
  .strict();

/** Every field optional: a PATCH merges it into the current analysis settings, a new agent into the defaults. */
const analysis = z
  .object({
    enabled: z.boolean().optional(),
    summary_prompt: z.string().max(AGENT_LIMITS.analysisPromptChars).optional(),
    success_criteria: z.string().max(AGENT_LIMITS.analysisPromptChars).optional(),
    structured_data: z.array(analysisField).max(AGENT_LIMITS.analysisFields).optional(),
  })
  .strict();

/** Checked as a whole by the tool validator, which lists every problem at once (`invalid_tools`). */
const tool = z.unknown().describe('A tool definition (see the agent response for its shape)');

const settingsFields = {
  draft: z.boolean(),
  archived: z.boolean(),
  system_prompt: z.string().max(AGENT_LIMITS.systemPromptChars),
  first_message: z.string().max(AGENT_LIMITS.firstMessageChars),
  language,
  secondary_languages: z.array(language).max(AGENT_LIMITS.secondaryLanguages),
  voice,
  max_duration_secs: z.number().int().min(AGENT_LIMITS.minDurationSecs).max(AGENT_LIMITS.maxDurationSecs),
  end_call: endCall,
  voicemail,
  background_sound: z.object({ sound: z.enum(BACKGROUND_SOUNDS) }).strict(),
  behavior,
  analysis,
  tools: z.array(tool),
  /** Checked as a whole by the flow validator, which lists every problem at once (`invalid_flow`). */
  flow: z.unknown(),
};

const name = z.string().trim().min(1).max(AGENT_LIMITS.nameChars);

const agentWebhookUrl = webhookUrl.describe(
  'Public HTTPS endpoint that receives the call.* events of the calls this agent answers (incoming calls)',
);

export const createAgentBody = z
  .object({
    name,
    ...Object.fromEntries(Object.entries(settingsFields).map(([k, s]) => [k, s.optional()])),
    calls_from: z
      .object({ pool_id: z.string().min(1).max(64) })
      .strict()
      .optional(),
    webhook_url: agentWebhookUrl.optional(),
  })
  .strict() as z.ZodType<CreateAgentBody>;

export const updateAgentBody = z
  .object({
    name: name.optional(),
    ...Object.fromEntries(Object.entries(settingsFields).map(([k, s]) => [k, s.optional()])),
    flow: z.unknown().optional(),
    calls_from: z
      .object({ pool_id: z.string().min(1).max(64) })
      .strict()
      .nullable()
      .optional(),
    webhook_url: agentWebhookUrl.nullable().optional(),
    if_revision: ifRevision.optional(),
  })
  .strict() as z.ZodType<UpdateAgentBody>;

type Fields = { [K in keyof typeof settingsFields]?: z.output<(typeof settingsFields)[K]> };
export type CreateAgentBody = Fields & {
  name: string;
  calls_from?: { pool_id: string };
  webhook_url?: string;
};
export type UpdateAgentBody = Fields & {
  name?: string;
  calls_from?: { pool_id: string } | null;
  webhook_url?: string | null;
  if_revision?: number;
};

export const saveFlowBody = z
  .object({
    nodes: z.unknown(),
    edges: z.unknown().optional(),
    if_revision: ifRevision.optional(),
  })
  .strict();

export const revisionActionBody = z.object({ if_revision: ifRevision.optional() }).strict();

/** An agent as the API shows it: its stored settings (one schema with the decoder) and its identity. */
export const agentSchema = z.object({
  id: z.string(),
  object: z.literal('agent'),
  revision: z.number().int(),
  ...agentSettingsSchema.shape,
  created_at: timestamp,
  updated_at: timestamp,
});

export const agentRevisionSchema = z.object({
  object: z.literal('agent_revision'),
  agent_id: z.string(),
  revision: z.number().int(),
  reason: z.enum(['create', 'update', 'flow', 'rollback', 'publish']),
  restored_from: z.number().int().nullable(),
  created_at: timestamp,
  agent: agentSchema.omit({ created_at: true, updated_at: true, id: true, object: true, revision: true }),
});

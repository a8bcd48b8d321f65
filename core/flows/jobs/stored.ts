/**
 * A flow test job as stored: its request (`input`, written once) and its state (rewritten after every step).
 * The one decoder of both shapes; the repository hands them out as `unknown`.
 */
import { z } from 'zod';
import { flowSchema } from '../../agents/stored.ts';
import type { JsonObject } from '../../store/values.ts';

export const FLOW_JOB_MODELS = ['provider1-3.8-flash', 'provider2-opus-5.5', 'provider3-6-sol'] as const;
export type FlowJobModel = (typeof FLOW_JOB_MODELS)[number];
export const DEFAULT_FLOW_JOB_MODEL: FlowJobModel = 'provider1-3.8-flash';

export const STAGES = [
  'writing_scenarios',
  'simulating',
  'reviewing',
  'revising',
  'verifying',
  'done',
] as const;
export type Stage = (typeof STAGES)[number];

const variableValue = z.union([z.string(), z.number(), z.boolean()]);

export const jobInputSchema = z.object({
  flow: flowSchema,
  brief: z.string(),
  /** Test calls, tidied to one `AGENT:`/`CALLER:` turn per line. */
  calls: z.array(z.string()),
  examples: z.array(z.string()),
  simulate: z.number().int(),
  /** The most revisions. */
  rounds: z.number().int(),
  verify: z.boolean(),
  variables: z.record(z.string(), variableValue),
  language: z.string().nullable(),
  max_duration_secs: z.number().int().nullable(),
  model: z.enum(FLOW_JOB_MODELS),
  agent_id: z.string().nullable(),
});
export type JobInput = z.infer<typeof jobInputSchema>;

export const scenarioSchema = z.object({
  kind: z.enum(['invented', 'example', 'call']),
  /** Into the job's example calls or test calls; null for invented callers. */
  index: z.number().int().nullable(),
  name: z.string(),
  goal: z.string(),
  persona: z.string(),
  variables: z.record(z.string(), variableValue),
});
export type Scenario = z.infer<typeof scenarioSchema>;

export const testSchema = z.object({
  /** Into this round's list of scenarios. */
  scenario: z.number().int(),
  source: z.object({ kind: z.enum(['call', 'example']), index: z.number().int() }).nullable(),
  caller: z.string(),
  /** The model the agent's turns ran on. */
  model: z.string(),
  transcript: z.string(),
  ended_by: z.enum(['agent', 'caller', 'turn_limit', 'error']),
  /** The nodes the call passed through, in order. */
  path: z.array(z.string()),
});
export type TestResult = z.infer<typeof testSchema>;

export const findingSchema = z.object({
  severity: z.enum(['high', 'medium', 'low']),
  node: z.string().nullable(),
  problem: z.string(),
  fix: z.string(),
});
export type Finding = z.infer<typeof findingSchema>;

export const reviewSchema = z.object({
  /** The flow revision reviewed. */
  revision: z.number().int(),
  summary: z.string(),
  findings: z.array(findingSchema),
  model: z.string(),
});
export type Review = z.infer<typeof reviewSchema>;

export const revisionOutcomeSchema = z.object({
  status: z.enum(['accepted', 'discarded']),
  /** The new flow revision, when accepted. */
  revision: z.number().int().nullable(),
  changes: z.array(z.string()),
  /** Why a discarded revision failed the save rules. */
  problems: z.array(z.object({ path: z.string(), message: z.string() })),
});
export type RevisionOutcome = z.infer<typeof revisionOutcomeSchema>;

export const roundSchema = z.object({
  round: z.number().int(),
  revision: z.number().int(),
  tests: z.array(testSchema),
  review: reviewSchema,
  revision_outcome: revisionOutcomeSchema.nullable(),
});
export type RoundRecord = z.infer<typeof roundSchema>;

export const usageSchema = z.object({
  simulated_input: z.number().int(),
  simulated_output: z.number().int(),
  hosted_input: z.number().int(),
  hosted_output: z.number().int(),
  /** Every hosted answer's price, in millionths of a paisa (rounded up to a paisa once, at the end). */
  hosted_micro_paise: z.number().int(),
});
export type JobUsage = z.infer<typeof usageSchema>;

export const jobStateSchema = z.object({
  stage: z.enum(STAGES),
  round: z.number().int(),
  rounds_max: z.number().int(),
  scenarios: z.array(scenarioSchema).nullable(),
  flow: flowSchema,
  revision: z.number().int(),
  tests: z.array(testSchema),
  tests_total: z.number().int(),
  review: reviewSchema.nullable(),
  rounds_finished: z.array(roundSchema),
  first_review: reviewSchema.nullable(),
  last_review: reviewSchema.nullable(),
  revisions_made: z.number().int(),
  usage: usageSchema,
  /** The model simulated agent turns run on; `fallback` once they moved to the default reviewing model. */
  simulation: z.object({ model: z.string(), fallback: z.boolean() }),
  result: z
    .object({
      changed: z.boolean(),
      final_flow: flowSchema,
      final_revision: z.number().int(),
      variables: z.record(z.string(), z.string()),
    })
    .nullable(),
  failure: z.object({ code: z.string(), message: z.string() }).nullable(),
  charge: z.object({ amount_paise: z.number().int(), transaction_id: z.string().nullable() }).nullable(),
});
export type JobState = z.infer<typeof jobStateSchema>;

export function storedJobInput(value: unknown): JobInput {
  return jobInputSchema.parse(value);
}

export function storedJobState(value: unknown): JobState {
  return jobStateSchema.parse(value);
}

export const draftInputSchema = z.object({
  brief: z.string(),
  language: z.string().nullable(),
  variables: z.record(z.string(), variableValue),
  model: z.enum(FLOW_JOB_MODELS),
});
export type DraftInput = z.infer<typeof draftInputSchema>;

export const draftStateSchema = z.object({
  stage: z.enum(['drafting', 'repairing', 'done']),
  /** The first draft and what broke the save rules, while it is being repaired. */
  rejected: z
    .object({ flow: z.unknown(), problems: z.array(z.object({ path: z.string(), message: z.string() })) })
    .nullable(),
  usage: usageSchema,
  result: z.object({ flow: flowSchema, variables: z.record(z.string(), z.string()) }).nullable(),
  failure: z.object({ code: z.string(), message: z.string() }).nullable(),
  charge: z.object({ amount_paise: z.number().int(), transaction_id: z.string().nullable() }).nullable(),
});
export type DraftState = z.infer<typeof draftStateSchema>;

export function storedDraftInput(value: unknown): DraftInput {
  return draftInputSchema.parse(value);
}

export function storedDraftState(value: unknown): DraftState {
  return draftStateSchema.parse(value);
}

/** A job's input or state as the JSON the store keeps. */
export function jobJson(value: JobInput | JobState | DraftInput | DraftState): JsonObject {
  return JSON.parse(JSON.stringify(value));
}

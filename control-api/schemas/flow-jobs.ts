import { z } from 'zod';
import { flowSchema } from '../../core/agents/stored.ts';
import { FLOW_JOB_MODELS, STAGES } from '../../core/flows/jobs/stored.ts';
import { timestamp } from './common.ts';

const transcriptItem = z.object({ transcript: z.string().min(1).max(40_000) }).strict();
const EXAMPLES_TOTAL_CHARS = 200_000;

/** `POST /v2/agents/flow/refine`: every field and rule of the interface; no extra properties. */
export const refineBody = z
  .object({
    flow: z.unknown().describe('The graph to test, validated like a save (400 invalid_flow)'),
    brief: z.string().max(20_000).optional(),
    calls: z.array(transcriptItem).min(1).max(5).optional(),
    examples: z
      .array(transcriptItem)
      .min(2)
      .max(10)
      .refine(
        (items) => items.reduce((sum, item) => sum + item.transcript.length, 0) <= EXAMPLES_TOTAL_CHARS,
        `must be at most ${EXAMPLES_TOTAL_CHARS} characters together`,
      )
      .optional(),
    simulate: z.number().int().min(0).max(5).optional(),
    rounds: z.number().int().min(1).max(3).optional(),
    verify: z.boolean().optional(),
    variables: z
      .record(z.string().min(1).max(64), z.union([z.string().max(2_000), z.number(), z.boolean()]))
      .refine((vars) => Object.keys(vars).length <= 50, 'must have at most 50 keys')
      .optional(),
    language: z.string().min(1).max(32).optional(),
    max_duration_secs: z.number().int().min(30).max(1800).optional(),
    model: z.enum(FLOW_JOB_MODELS).optional(),
    agent_id: z.string().min(1).max(64).optional(),
  })
  .strict();

/** `POST /v2/agents/flow/transcribe`: a call of the workspace, or (not live yet) an uploaded recording. */
export const transcribeBody = z
  .object({
    call_id: z.string().min(1).max(64).optional(),
    recording: z.string().max(1_000_000).optional().describe('base64 audio: not transcribed yet (501)'),
  })
  .strict();

export const flowTranscriptSchema = z.object({
  object: z.literal('flow_transcript'),
  call_id: z.string(),
  transcript: z.string().describe('One AGENT:/CALLER: turn per line'),
  turns: z.number().int(),
  audio_secs: z.number().int(),
  cost: z.object({ amount_inr: z.number(), transaction_id: z.string().nullable() }),
});

/** `POST /v2/agents/flow/generate`. */
export const generateBody = z
  .object({
    brief: z.string().min(1).max(20_000),
    language: z.string().min(1).max(32).optional(),
    variables: z
      .record(z.string().min(1).max(64), z.union([z.string().max(2_000), z.number(), z.boolean()]))
      .refine((vars) => Object.keys(vars).length <= 50, 'must have at most 50 keys')
      .optional(),
    model: z.enum(FLOW_JOB_MODELS).optional(),
  })
  .strict();

const source = z.object({ kind: z.enum(['call', 'example']), index: z.number().int() }).nullable();
const test = z.object({
  source,
  caller: z.string(),
  model: z.string(),
  ended_by: z.enum(['agent', 'caller', 'turn_limit', 'error']),
  path: z.array(z.string()),
  transcript: z.string().describe('One AGENT:/CALLER: turn per line'),
});
const review = z
  .object({
    revision: z.number().int(),
    summary: z.string(),
    findings: z.array(
      z.object({
        severity: z.enum(['high', 'medium', 'low']),
        node: z.string().nullable(),
        problem: z.string(),
        fix: z.string(),
      }),
    ),
    model: z.string(),
  })
  .nullable();

export const flowRefinementSchema = z.object({
  id: z.string().regex(/^frf_[0-9A-Z]{26}$/),
  object: z.literal('flow_refinement'),
  status: z.enum(['running', 'succeeded', 'failed', 'canceled']),
  stage: z.enum(STAGES),
  progress: z.object({
    round: z.number().int(),
    rounds: z.number().int(),
    tests_done: z.number().int(),
    tests_total: z.number().int(),
  }),
  model: z.enum(FLOW_JOB_MODELS),
  simulation_model: z.string(),
  simulation_fell_back: z.boolean(),
  agent_id: z.string().nullable(),
  revision_sent: z.number().int().describe('Flow revisions are counted within the job: the graph sent is 1'),
  rounds_requested: z.number().int(),
  verify: z.boolean(),
  tests: z.array(test).describe("This round's tests so far"),
  rounds_finished: z.array(
    z.object({
      round: z.number().int(),
      revision: z.number().int(),
      tests: z.array(test),
      review,
      revision_outcome: z
        .object({
          status: z.enum(['accepted', 'discarded']),
          revision: z.number().int().nullable(),
          changes: z.array(z.string()),
          problems: z.array(z.object({ path: z.string(), message: z.string() })),
        })
        .nullable(),
    }),
  ),
  test_calls: z.array(z.string()),
  example_calls: z.array(z.string()),
  first_review: review,
  last_review: review,
  tokens: z.object({ input: z.number().int(), output: z.number().int(), total: z.number().int() }),
  cost: z.object({
    amount_inr: z.number().describe('So far while running; once ended, the amount charged'),
    charged: z.boolean(),
    transaction_id: z.string().nullable(),
  }),
  changed: z.boolean().nullable(),
  final_flow: flowSchema.nullable(),
  final_revision: z.number().int().nullable(),
  input_schema: z.record(z.string(), z.unknown()).nullable(),
  variables: z.record(z.string(), z.string()).nullable(),
  failure_reason: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  ended_at: timestamp.nullable(),
});

export const flowDraftSchema = z.object({
  id: z.string().regex(/^fdr_[0-9A-Z]{26}$/),
  object: z.literal('flow_draft'),
  status: z.enum(['running', 'succeeded', 'failed']),
  model: z.enum(FLOW_JOB_MODELS),
  flow: flowSchema.nullable().describe('Once succeeded: passes every rule of saving a flow; not saved'),
  input_schema: z.record(z.string(), z.unknown()).nullable(),
  variables: z.record(z.string(), z.string()).nullable(),
  tokens: z.object({ input: z.number().int(), output: z.number().int(), total: z.number().int() }),
  cost: z.object({ amount_inr: z.number(), charged: z.boolean(), transaction_id: z.string().nullable() }),
  failure_reason: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: timestamp,
  ended_at: timestamp.nullable(),
});

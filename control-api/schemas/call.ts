import { z } from 'zod';
import { MAX_DURATION_SECS } from '../../core/calls/admission.ts';
import { CALL_LIMITS, VARIABLE_NAME } from '../../core/calls/variables.ts';
import { idPattern } from '../../core/ids.ts';
import { callLatencySchema } from '../../core/store/call-latency.ts';
import { CALL_STATUSES, type CallStatus } from '../../core/store/call-types.ts';
import { listQuery } from '../http/pagination.ts';
import { timestamp } from './common.ts';

export { CALL_LIMITS };

export const E164 = /^\+[1-9]\d{6,14}$/;
const agentId = z.string().max(64).regex(idPattern('agent'), 'must be an agent id (agt_...)');

const variableValue = z.union(
  [z.string().max(CALL_LIMITS.variableValueChars), z.number(), z.boolean(), z.null()],
  { error: 'must be a string, number, boolean or null (variables are a flat map)' },
);

export const variables = z
  .record(z.string().regex(VARIABLE_NAME), variableValue, {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? 'is not a valid variable name (letters, digits and _, not starting with a digit, at most 64)'
        : issue.code === 'invalid_type'
          ? 'must be an object of names to values'
          : undefined,
  })
  .refine((map) => Object.keys(map).length <= CALL_LIMITS.variables, {
    message: `must have at most ${CALL_LIMITS.variables} keys`,
  })
  .describe('A flat map substituted into the prompt; never echoed on events');

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

export const webhookUrl = z
  .string()
  .max(CALL_LIMITS.webhookUrlChars)
  .refine(isHttpsUrl, { message: 'must be an https:// URL' })
  .describe('Public HTTPS endpoint that receives this call’s events');

export const createCallBody = z
  .object({
    agent_id: agentId,
    to: z.string().regex(E164, 'must be an E.164 number such as +919876543210').optional(),
    channel: z.enum(['phone', 'web']).default('phone'),
    webhook_url: webhookUrl.optional(),
    variables: variables.optional(),
    max_duration_secs: z
      .number()
      .int()
      .min(MAX_DURATION_SECS.min)
      .max(MAX_DURATION_SECS.max)
      .optional()
      .describe("Per-call override of the agent's max_duration_secs"),
    tier: z
      .enum(['t1', 't3', 't5'])
      .optional()
      .describe('Default t3; t5 is refused with 501 tier_unavailable'),
    phone_number_id: z.string().min(1).max(64).optional(),
    pool_id: z.string().min(1).max(64).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.channel === 'phone' && body.to === undefined) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'is required for phone calls' });
    }
    if (body.channel === 'web' && body.to !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'is not used by web calls (the browser joins)' });
    }
    if (body.phone_number_id !== undefined && body.pool_id !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['pool_id'],
        message: 'cannot be sent together with phone_number_id; send one of them',
      });
    }
  });

export type CreateCallBody = z.output<typeof createCallBody>;

function statusList(value: string, ctx: z.RefinementCtx): CallStatus[] {
  const parts = value.split(',').map((part) => part.trim());
  const unknown = parts.filter((part) => !(CALL_STATUSES as readonly string[]).includes(part));
  if (unknown.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `has unknown value${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u)).join(', ')}; expected ${CALL_STATUSES.join(', ')}`,
    });
    return [];
  }
  return [...new Set(parts)] as CallStatus[];
}

const createdAt = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 timestamp such as 2026-01-31T09:30:00Z' })
  .transform((value) => Date.parse(value));

export const listCallsQuery = listQuery('call')
  .extend({
    status: z
      .string()
      .max(200)
      .transform(statusList)
      .optional()
      .describe('One status or a comma-separated list'),
    agent_id: agentId.optional(),
    campaign_id: z.string().min(1).max(64).optional().describe('Calls placed by this campaign'),
    created_after: createdAt.optional().describe('Calls created at or after this time'),
    created_before: createdAt.optional().describe('Calls created before this time'),
  })
  .strict();
export type ListCallsQuery = z.output<typeof listCallsQuery>;

/** The runs of the agent's tools on a call: no request or response bodies, no secret values. */
export const toolCallsSchema = z.array(
  z.object({
    name: z.string(),
    phase: z.enum(['pre_call', 'on_call', 'post_call']),
    started_at: timestamp,
    duration_ms: z.number().int(),
    status: z.enum(['succeeded', 'failed', 'timeout', 'skipped']),
    http_status: z.number().int().nullable(),
  }),
);

export const callSchema = z.object({
  id: z.string(),
  object: z.literal('call'),
  agent_id: z.string(),
  to: z.string().nullable(),
  status: z.enum(CALL_STATUSES),
  ended_reason: z
    .string()
    .nullable()
    .describe(
      'null while the call is live. Values: assistant-ended-call, customer-ended-call, voicemail, customer-did-not-answer, customer-busy, pipeline-error, exceeded-max-duration, aborted-by-api, node-shutdown (the gateway running the call was stopped past its drain window; failed, free), gateway-at-capacity (the media of the call reached a gateway node already at its call limit, GATEWAY_MAX_CALLS; failed, free)',
    ),
  started_at: timestamp.nullable().describe('null if the call never connected'),
  ended_at: timestamp.nullable().describe('null while the call is live'),
  duration_secs: z.number().int(),
  cost: z.object({ amount_inr: z.number(), per_min_inr: z.number() }),
  tier: z.string(),
  transcript_available: z.boolean(),
  recording_available: z.boolean(),
  calls_from_source: z.literal('pool').optional(),
  pool_id: z.string().optional(),
  channel: z.enum(['phone', 'web']),
  direction: z
    .enum(['outbound', 'inbound'])
    .describe(
      "inbound: a caller rang one of the workspace's numbers (to is that number, from the caller, phone_number_id set); outbound: the platform rang `to`",
    ),
  from: z.string().nullable(),
  phone_number_id: z
    .string()
    .optional()
    .describe("the workspace's number the call rings from (named, or picked by its pool)"),
  campaign_id: z.string().optional().describe('the campaign that placed the call; absent for single calls'),
  max_duration_secs: z.number().int(),
  created_at: timestamp,
  analysis: z.record(z.string(), z.unknown()).nullable(),
  latency: callLatencySchema.nullable(),
});

export const createdCallSchema = callSchema.extend({
  web: z
    .object({
      url: z
        .string()
        .describe('WebSocket URL of the call’s media stream (gateway/web/PROTOCOL.md), token included'),
      token: z.string().describe('one-time stream token; good for one connection'),
      expires_at: timestamp.describe(
        'the browser must join before this (WEB_CALL_JOIN_MS after creation); a web call nobody joined ends no_answer then',
      ),
      page_url: z
        .string()
        .describe(
          'the gateway’s demo page for this call: opened, it joins the call at once and shows the conversation',
        ),
    })
    .optional()
    .describe('web calls only: how a browser joins'),
});

export const transcriptSchema = z.object({
  object: z.literal('transcript'),
  call_id: z.string(),
  turns: z.array(
    z.object({
      speaker: z.enum(['agent', 'caller']),
      text: z.string(),
      start_ms: z.number().int().describe('from the moment media went live'),
      end_ms: z.number().int(),
      interrupted: z.boolean().describe('the agent was cut off; text is what the caller heard'),
      recognized: z
        .boolean()
        .optional()
        .describe(
          'caller turns: whether words were recognised; false: the caller spoke from start_ms to end_ms but no speech-to-text engine gave words for it (none serves the call’s language, or it failed), and text is empty',
        ),
      node: z.string().optional().describe('the flow node the agent spoke from'),
    }),
  ),
});

import { z } from 'zod';
import {
  CAMPAIGN_LIMITS,
  CAMPAIGN_STATUSES,
  CONTACT_STATUSES,
  isClockTime,
  isTimeZone,
  PAUSE_REASONS,
  WEEKDAYS,
} from '../../core/campaigns/settings.ts';
import { idPattern } from '../../core/ids.ts';
import { listEnvelope, pageCursor, pageLimit } from '../http/pagination.ts';
import { variables, webhookUrl } from './call.ts';
import { idOf, timestamp } from './common.ts';

const clockTime = z.string().refine(isClockTime, { message: 'must be a local time "HH:MM" (00:00-24:00)' });

const slot = z
  .object({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1)
      .max(7)
      .refine((days) => new Set(days).size === days.length, { message: 'must not repeat a day' }),
    start: clockTime,
    end: clockTime,
  })
  .strict()
  .refine((s) => s.start !== s.end, { message: 'start and end must differ', path: ['end'] })
  .describe(
    'Calling hours on these weekdays, local to the campaign timezone; an end before the start runs past midnight',
  );

const { maxConcurrent, retryCount, reAttemptPeriodSecs } = CAMPAIGN_LIMITS;

const settingsFields = {
  name: z.string().trim().min(1).max(CAMPAIGN_LIMITS.nameChars),
  agent_id: z.string().max(64).regex(idPattern('agent'), 'must be an agent id (agt_...)'),
  pool_id: z.string().min(1).max(64).describe('The pool it rings from; default: the workspace default'),
  tier: z.enum(['t1', 't3', 't5']).describe('Default t3; a sandbox workspace bills every campaign at t5'),
  timezone: z
    .string()
    .max(64)
    .refine(isTimeZone, { message: 'must be an IANA time zone such as Asia/Kolkata' }),
  slots: z.array(slot).min(1).max(CAMPAIGN_LIMITS.slots),
  max_concurrent: z.number().int().min(maxConcurrent.min).max(maxConcurrent.max),
  retry_count: z.number().int().min(retryCount.min).max(retryCount.max),
  re_attempt_period_secs: z.number().int().min(reAttemptPeriodSecs.min).max(reAttemptPeriodSecs.max),
  budget_paise: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  webhook_url: webhookUrl,
  variables,
};

export const createCampaignBody = z
  .object({
    ...settingsFields,
    pool_id: settingsFields.pool_id.optional(),
    tier: settingsFields.tier.optional(),
    max_concurrent: settingsFields.max_concurrent.optional(),
    retry_count: settingsFields.retry_count.optional(),
    re_attempt_period_secs: settingsFields.re_attempt_period_secs.optional(),
    budget_paise: settingsFields.budget_paise.optional(),
    webhook_url: settingsFields.webhook_url.optional(),
    variables: settingsFields.variables.optional(),
  })
  .strict();

export const updateCampaignBody = z
  .object({
    name: settingsFields.name.optional(),
    agent_id: settingsFields.agent_id.optional(),
    pool_id: settingsFields.pool_id.nullable().optional(),
    tier: settingsFields.tier.optional(),
    timezone: settingsFields.timezone.optional(),
    slots: settingsFields.slots.optional(),
    max_concurrent: settingsFields.max_concurrent.optional(),
    retry_count: settingsFields.retry_count.optional(),
    re_attempt_period_secs: settingsFields.re_attempt_period_secs.optional(),
    budget_paise: settingsFields.budget_paise.nullable().optional(),
    webhook_url: settingsFields.webhook_url.nullable().optional(),
    variables: settingsFields.variables.optional(),
  })
  .strict();

const counts = z.object(Object.fromEntries(CONTACT_STATUSES.map((s) => [s, z.number().int()])));

export const campaignSchema = z.object({
  id: z.string(),
  object: z.literal('campaign'),
  name: z.string(),
  agent_id: z.string(),
  pool_id: z.string().nullable(),
  tier: z.string(),
  billing_tier: z.string().describe('The tier its calls bill at: t5 in a sandbox workspace'),
  timezone: z.string(),
  slots: z.array(z.object({ days: z.array(z.enum(WEEKDAYS)), start: z.string(), end: z.string() })),
  max_concurrent: z.number().int(),
  retry_count: z.number().int(),
  re_attempt_period_secs: z.number().int(),
  budget_paise: z.number().int().nullable(),
  spent_paise: z.number().int().describe("The sum of its calls' charges"),
  held_paise: z.number().int().describe('Held for its calls in progress'),
  webhook_url: z.string().nullable(),
  variables: z.record(z.string(), z.unknown()),
  status: z.enum(CAMPAIGN_STATUSES),
  pause_reason: z.enum(PAUSE_REASONS).nullable(),
  next_window_at: timestamp.nullable().describe('While outside its calling hours: when they open next'),
  progress: z.object({
    contacts: counts.extend({ total: z.number().int() }),
    calls_placed: z.number().int(),
  }),
  created_at: timestamp,
  updated_at: timestamp,
});

export const contactSchema = z.object({
  id: z.string(),
  object: z.literal('campaign_contact'),
  campaign_id: z.string(),
  to: z.string(),
  variables: z.record(z.string(), z.unknown()),
  status: z.enum(CONTACT_STATUSES),
  attempts: z.number().int(),
  call_ids: z.array(z.string()),
  next_attempt_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const contactsBody = z
  .object({
    contacts: z
      .array(
        z
          .object({
            to: z.string().max(64).describe('E.164, +91 only'),
            variables: z
              .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
              .optional(),
          })
          .strict(),
      )
      .min(1)
      .max(CAMPAIGN_LIMITS.contactsPerJsonRequest),
  })
  .strict();

export const contactsReportSchema = z.object({
  object: z.literal('contact_upload'),
  accepted: z.number().int(),
  duplicates: z.number().int().describe('Numbers already in the campaign, or given twice'),
  rejected: z
    .array(z.object({ row: z.number().int(), message: z.string() }))
    .describe(
      'Rows not added (at most 1,000 listed): `row` is 1-based (CSV: the data row, the header not counted)',
    ),
});

export const campaignListQuery = z
  .object({
    limit: pageLimit,
    starting_after: idOf('campaign').optional(),
    cursor: pageCursor.optional(),
    status: z.enum(CAMPAIGN_STATUSES).optional(),
  })
  .strict();

export const contactListQuery = z
  .object({
    limit: pageLimit,
    starting_after: idOf('contact').optional(),
    cursor: pageCursor.optional(),
    status: z.enum(CONTACT_STATUSES).optional(),
  })
  .strict();

export const campaignList = listEnvelope(campaignSchema);
export const contactList = listEnvelope(contactSchema);

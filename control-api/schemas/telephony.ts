import { z } from 'zod';
import { isoTime } from '../../core/clock.ts';
import { paiseToRupees } from '../../core/money.ts';
import type { QuoteRecord, SubmissionRecord } from '../../core/store/types.ts';
import type { NumberView } from '../../core/telephony/pacing.ts';
import type { PoolView } from '../../core/telephony/pools.ts';
import { POOL_LIMITS } from '../../core/telephony/pools.ts';
import type { AvailableNumber } from '../../core/telephony/provider.ts';
import { idOf, timestamp } from './common.ts';

export const version = z
  .number()
  .int()
  .min(1)
  .max(Number.MAX_SAFE_INTEGER)
  .describe("The number's current version; a stale one is 409 conflict");

export const indianNumber = z
  .string()
  .max(16)
  .describe('E.164, Indian numbers only: +91 and ten digits (400 invalid_request otherwise)');

export const phoneNumberSchema = z.object({
  id: z.string().describe('pn_<ulid>'),
  object: z.literal('phone_number'),
  number: z.string(),
  ownership: z.enum(['managed', 'customer']),
  provider: z.string(),
  state: z.enum(['imported', 'ready', 'error']),
  setup_error: z.string().nullable().describe('why, when state is error'),
  agent_id: z.string().nullable(),
  incoming_enabled: z.boolean(),
  pool_id: z.string().nullable(),
  version: z.number().int(),
  health: z.object({
    state: z.enum(['active', 'warming', 'resting', 'cooling', 'retired']),
    attempts_this_hour: z.number().int(),
    answers_7d: z.number().int(),
    attempts_7d: z.number().int(),
    resting_until: timestamp.nullable(),
  }),
  renews_at: timestamp
    .nullable()
    .optional()
    .describe('managed numbers: when the next three months are charged; null once deleted'),
  paid_until: timestamp.nullable().optional().describe('managed numbers: the end of the paid period'),
  releases_at: timestamp.nullable().describe('set once deleted: when the number is released'),
  created_at: timestamp,
  updated_at: timestamp,
});

export function phoneNumberBody(view: NumberView) {
  const r = view.record;
  const h = view.health;
  const time = (ms: number | null) => (ms === null ? null : isoTime(ms));
  return {
    id: r.id,
    object: 'phone_number' as const,
    number: r.number,
    ownership: r.ownership,
    provider: r.provider,
    state: r.state,
    setup_error: r.setupError,
    agent_id: r.agentId,
    incoming_enabled: r.incomingEnabled,
    pool_id: r.poolId,
    version: r.version,
    health: {
      state: h.state,
      attempts_this_hour: h.attemptsThisHour,
      answers_7d: h.answers7d,
      attempts_7d: h.attempts7d,
      resting_until: time(h.restingUntil),
    },
    ...(r.ownership === 'managed' ? { renews_at: time(r.renewsAt), paid_until: time(r.paidUntil) } : {}),
    releases_at: time(r.releasesAt),
    created_at: isoTime(r.createdAt),
    updated_at: isoTime(r.updatedAt),
  };
}

export const poolPurpose = z.enum(['outreach', 'reminders', 'support', 'other']);

const poolName = z.string().trim().min(1).max(100);
const maxPerHour = z
  .number()
  .int()
  .min(POOL_LIMITS.maxPerHour.min)
  .max(POOL_LIMITS.maxPerHour.max)
  .describe('Calls per number and hour; default 40 for support pools, 60 otherwise; warming numbers at half');
const numberIds = z
  .array(idOf('phoneNumber'))
  .max(POOL_LIMITS.numbers)
  .describe(
    `The workspace's numbers the pool rings from (at most ${POOL_LIMITS.numbers}); a number is in one pool at most`,
  );

export const createPoolBody = z
  .object({
    name: poolName,
    purpose: poolPurpose,
    max_per_hour: maxPerHour.optional(),
    default_for_campaigns: z.boolean().optional(),
    number_ids: numberIds,
  })
  .strict();

export const updatePoolBody = z
  .object({
    name: poolName.optional(),
    purpose: poolPurpose.optional(),
    max_per_hour: maxPerHour.nullable().optional().describe('null: back to the purpose’s starting pace'),
    default_for_campaigns: z.boolean().optional(),
    number_ids: numberIds.optional(),
  })
  .strict();

export const phonePoolSchema = z.object({
  id: z.string().describe('ppl_<ulid>'),
  object: z.literal('phone_pool'),
  name: z.string(),
  purpose: poolPurpose,
  max_per_hour: z.number().int(),
  default_for_campaigns: z.boolean(),
  number_ids: z.array(z.string()),
  created_at: timestamp,
  updated_at: timestamp,
});

export const phonePoolBody = (view: PoolView) => ({
  id: view.record.id,
  object: 'phone_pool' as const,
  name: view.record.name,
  purpose: view.record.purpose,
  max_per_hour: view.maxPerHour,
  default_for_campaigns: view.record.defaultForCampaigns,
  number_ids: view.numberIds,
  created_at: isoTime(view.record.createdAt),
  updated_at: isoTime(view.record.updatedAt),
});

const httpsUrl = z
  .string()
  .url()
  .max(2048)
  .refine((u) => u.startsWith('https://'), 'must be an https:// link');

export const submitBody = z
  .object({
    business: z
      .object({
        name: z.string().trim().min(1).max(200),
        registration_number: z.string().trim().min(1).max(64),
        gstin: z
          .string()
          .regex(/^[0-9]{2}[A-Z0-9]{10}[0-9A-Z]{3}$/, 'must be a 15-character GSTIN')
          .optional(),
      })
      .strict(),
    address: z
      .object({
        line1: z.string().trim().min(1).max(200),
        line2: z.string().max(200).optional(),
        city: z.string().trim().min(1).max(100),
        state: z.string().trim().min(1).max(100),
        postal_code: z.string().regex(/^[1-9][0-9]{5}$/, 'must be a 6-digit PIN code'),
      })
      .strict(),
    documents: z
      .array(z.object({ type: z.string().min(1).max(64), url: httpsUrl }).strict())
      .min(1)
      .max(10)
      .describe('Links to the documents GET /v2/telephony/requirements lists; the provider fetches them'),
  })
  .strict();

export const submissionSchema = z.object({
  id: z.string(),
  object: z.literal('telephony_submission'),
  provider: z.string(),
  status: z.enum(['pending', 'approved', 'rejected']),
  reasons: z.array(z.string()).describe('why, when rejected'),
  submitted_at: timestamp,
  reviewed_at: timestamp.nullable(),
});

export const submissionBody = (s: SubmissionRecord) => ({
  id: s.id,
  object: 'telephony_submission' as const,
  provider: s.provider,
  status: s.status,
  reasons: s.reasons,
  submitted_at: isoTime(s.createdAt),
  reviewed_at: s.reviewedAt === null ? null : isoTime(s.reviewedAt),
});

export const availableNumberSchema = z.object({
  object: z.literal('available_number'),
  number: z.string(),
  type: z.enum(['local', 'mobile']),
  area: z.string().nullable(),
  region: z.string(),
  monthly_inr: z.number(),
});

export const availableNumberBody = (n: AvailableNumber, monthlyPaise: number) => ({
  object: 'available_number' as const,
  number: n.number,
  type: n.type,
  area: n.area,
  region: n.region,
  monthly_inr: paiseToRupees(monthlyPaise),
});

export const quoteSchema = z.object({
  id: z.string().describe('quo_<ulid>; send it to POST /v2/telephony/rent'),
  object: z.literal('telephony_quote'),
  number: z.string(),
  monthly_inr: z.number(),
  period_months: z.number().int(),
  amount_inr: z.number().describe('charged from the wallet at rent, and at each renewal'),
  expires_at: timestamp,
});

export const quoteBody = (q: QuoteRecord) => ({
  id: q.id,
  object: 'telephony_quote' as const,
  number: q.number,
  monthly_inr: paiseToRupees(q.amountPaise / q.periodMonths),
  period_months: q.periodMonths,
  amount_inr: paiseToRupees(q.amountPaise),
  expires_at: isoTime(q.expiresAt),
});

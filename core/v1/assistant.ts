import { z } from 'zod';

/**
 * The v1 Assistant (interface "Assistant (v1)") as clients write it and as it is stored beside its v2 agent.
 * Every string, list and number is bounded; objects are strict so a misspelt field is a 400, not lost.
 */

export const VARIANT_TYPES = [
  'abandoned_cart',
  'cod_to_prepaid',
  'address_verification',
  'order_confirmation',
  'ndr_followup',
] as const;
export type VariantType = (typeof VARIANT_TYPES)[number];

export const V1_LIMITS = {
  nameChars: 200,
  textChars: 500,
  systemPromptChars: 6000,
  messageChars: 500,
  listItems: 20,
  faqItems: 50,
  answerChars: 2000,
  documents: 10,
  urlChars: 2048,
  schemaItems: 50,
  planChars: 2000,
} as const;

const text = (max: number = V1_LIMITS.textChars) => z.string().max(max);
const list = <T extends z.ZodType>(item: T, max: number = V1_LIMITS.listItems) => z.array(item).max(max);
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM (24-hour)');
const count = (max: number) => z.number().int().min(0).max(max);

const supportContacts = z.object({ phoneNumber: text(20).optional(), email: text(254).optional() }).strict();

const inputField: z.ZodType<InputField> = z.lazy(() =>
  z
    .object({
      name: text(64),
      type: text(32),
      isRequired: z.boolean().optional(),
      fields: list(inputField, V1_LIMITS.schemaItems).optional(),
    })
    .strict(),
);
interface InputField {
  name: string;
  type: string;
  isRequired?: boolean | undefined;
  fields?: InputField[] | undefined;
}

/** JSON of bounded size, for the free-form parts (`variableSchema.properties`, `callInsightPlan`). */
const boundedJson = z
  .record(z.string().max(64), z.unknown())
  .refine((value) => JSON.stringify(value).length <= 20_000, 'must be at most 20000 characters as JSON');

export const variantConfigSchema = z
  .object({
    inputSchema: list(inputField, V1_LIMITS.schemaItems).optional(),
    variableSchema: z
      .object({
        properties: boundedJson.optional(),
        required: list(text(64), V1_LIMITS.schemaItems).optional(),
      })
      .strict()
      .optional(),
    abandoned_cart: z
      .object({
        paymentPlan: z
          .object({
            mode: z.enum(['online', 'cod', 'both']).optional(),
            additionalFee: z
              .object({ cod: z.number().min(0).max(100_000).optional() })
              .strict()
              .optional(),
          })
          .strict()
          .optional(),
        supportContacts: supportContacts.optional(),
      })
      .strict()
      .optional(),
    cod_to_prepaid: z
      .object({
        paymentLinkValidity: z.number().int().min(1).max(10_080).optional(),
        codFee: z.number().min(0).max(100_000).optional(),
        supportContacts: supportContacts.optional(),
      })
      .strict()
      .optional(),
    address_verification: z
      .object({
        minDays: count(60).optional(),
        maxDays: count(60).optional(),
        supportContacts: supportContacts.optional(),
      })
      .strict()
      .optional(),
    order_confirmation: z.object({ supportContacts: supportContacts.optional() }).strict().optional(),
    ndr_followup: z
      .object({
        maxRescheduleDays: count(30).optional(),
        webhookToken: text(256).optional(),
        supportContacts: supportContacts.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type VariantConfig = z.output<typeof variantConfigSchema>;

const agentSection = z
  .object({
    identity: z
      .object({
        name: text(100).optional(),
        gender: z.enum(['male', 'female']).optional(),
        voice: text(100).optional(),
      })
      .strict()
      .optional(),
    systemPrompt: text(V1_LIMITS.systemPromptChars).optional(),
    firstMessage: text(V1_LIMITS.messageChars).optional(),
    endMessage: text(V1_LIMITS.messageChars).optional(),
    tools: list(z.object({ integration_id: text(100), tools: list(text(100)) }).strict()).optional(),
  })
  .strict();

const callSettings = z
  .object({
    slots: list(z.object({ startTime: hhmm, endTime: hhmm }).strict(), 12).optional(),
    retryProtocol: z
      .object({
        maxAttemptsNoPickup: count(10).optional(),
        maxAttemptsLowEngagement: count(10).optional(),
        reAttemptPeriod: count(10_080).optional(),
        maxRescheduleCount: count(10).optional(),
      })
      .strict()
      .optional(),
    maxCallDuration: z.number().int().min(30).max(1_800).optional(),
    concurrentCallCount: z.number().int().min(1).max(5).optional(),
  })
  .strict();

/** The writable fields; `_id`, `archivedAt` and `createdAt` are the platform's. */
export const assistantInputShape = {
  name: text(V1_LIMITS.nameChars).min(1),
  variant: z.object({ type: z.enum(VARIANT_TYPES), config: variantConfigSchema.optional() }).strict(),
  agent: agentSection.optional(),
  telephony: z
    .object({ inbound: text(64).optional(), outbound: text(64).optional() })
    .strict()
    .optional(),
  icpContext: z
    .object({
      targetAgeGroups: list(text(64)).optional(),
      locationTiers: list(text(64)).optional(),
      language: text(32).optional(),
      targetAudience: list(text(64)).optional(),
    })
    .strict()
    .optional(),
  callSettings: callSettings.optional(),
  analysisPlan: z
    .object({
      successCriteriaPlan: text(V1_LIMITS.planChars).optional(),
      summaryPlan: text(V1_LIMITS.planChars).optional(),
      callInsightPlan: boundedJson.optional(),
    })
    .strict()
    .optional(),
  knowledgeBase: z
    .object({
      documents: list(
        z
          .object({
            url: z.string().url().max(V1_LIMITS.urlChars),
            title: text(200),
            type: z.enum(['pdf', 'txt', 'html']),
          })
          .strict(),
        V1_LIMITS.documents,
      ).optional(),
      faq: list(
        z.object({ question: text(500), answer: text(V1_LIMITS.answerChars) }).strict(),
        V1_LIMITS.faqItems,
      ).optional(),
    })
    .strict()
    .optional(),
  timezone: text(64)
    .refine((zone) => isTimeZone(zone), 'must be an IANA time zone such as Asia/Kolkata')
    .optional(),
};

export const createAssistantBody = z.object(assistantInputShape).strict();
export type CreateAssistantBody = z.output<typeof createAssistantBody>;

/** An update: any writable field; objects replace the stored object of that name (one level deep merge). */
export const updateAssistantBody = z
  .object({
    ...assistantInputShape,
    variant: assistantInputShape.variant.optional(),
    name: assistantInputShape.name.optional(),
  })
  .strict();
export type UpdateAssistantBody = z.output<typeof updateAssistantBody>;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The stored v1 document: every section present, defaults filled in. */
export interface AssistantDocument {
  name: string;
  variant: { type: VariantType; config: VariantConfig };
  agent: {
    identity: { name: string; gender: 'male' | 'female'; voice: string };
    systemPrompt: string;
    firstMessage: string;
    endMessage: string;
    tools: Array<{ integration_id: string; tools: string[] }>;
  };
  telephony: { inbound: string; outbound: string };
  icpContext: {
    targetAgeGroups: string[];
    locationTiers: string[];
    language: string;
    targetAudience: string[];
  };
  callSettings: {
    slots: Array<{ startTime: string; endTime: string }>;
    retryProtocol: {
      maxAttemptsNoPickup: number;
      maxAttemptsLowEngagement: number;
      reAttemptPeriod: number;
      maxRescheduleCount: number;
    };
    maxCallDuration: number;
    concurrentCallCount: number;
  };
  analysisPlan: {
    successCriteriaPlan: string;
    summaryPlan: string;
    callInsightPlan: Record<string, unknown>;
  };
  knowledgeBase: {
    documents: Array<{ url: string; title: string; type: string }>;
    faq: Array<{ question: string; answer: string }>;
  };
  archivedAt: string | null;
  timezone: string;
}

export const DEFAULT_TIMEZONE = 'Asia/Kolkata';

/** A new assistant's document: the input over the defaults. */
export function documentFromInput(input: CreateAssistantBody): AssistantDocument {
  return mergeDocument(emptyDocument(input.name, input.variant.type), input);
}

function emptyDocument(name: string, type: VariantType): AssistantDocument {
  return {
    name,
    variant: { type, config: {} },
    agent: {
      identity: { name: 'Riya', gender: 'female', voice: '' },
      systemPrompt: '',
      firstMessage: '',
      endMessage: '',
      tools: [],
    },
    telephony: { inbound: '', outbound: '' },
    icpContext: { targetAgeGroups: [], locationTiers: [], language: 'english', targetAudience: [] },
    callSettings: {
      slots: [],
      retryProtocol: {
        maxAttemptsNoPickup: 0,
        maxAttemptsLowEngagement: 0,
        reAttemptPeriod: 0,
        maxRescheduleCount: 0,
      },
      maxCallDuration: 300,
      concurrentCallCount: 1,
    },
    analysisPlan: { successCriteriaPlan: '', summaryPlan: '', callInsightPlan: {} },
    knowledgeBase: { documents: [], faq: [] },
    archivedAt: null,
    timezone: DEFAULT_TIMEZONE,
  };
}

/** `current` with an update applied: sections merge one level deep (`agent.identity` two), lists replace. */
export function mergeDocument(current: AssistantDocument, update: UpdateAssistantBody): AssistantDocument {
  const next: AssistantDocument = structuredClone(current);
  if (update.name !== undefined) next.name = update.name;
  if (update.variant) {
    next.variant = {
      type: update.variant.type,
      config: {
        ...(update.variant.type === current.variant.type ? current.variant.config : {}),
        ...defined(update.variant.config ?? {}),
      },
    };
  }
  if (update.agent) {
    const { identity, ...rest } = update.agent;
    next.agent = {
      ...next.agent,
      ...defined(rest),
      identity: { ...next.agent.identity, ...defined(identity ?? {}) },
    };
  }
  if (update.telephony) next.telephony = { ...next.telephony, ...defined(update.telephony) };
  if (update.icpContext) next.icpContext = { ...next.icpContext, ...defined(update.icpContext) };
  if (update.callSettings) {
    const { retryProtocol, ...rest } = update.callSettings;
    next.callSettings = {
      ...next.callSettings,
      ...defined(rest),
      retryProtocol: { ...next.callSettings.retryProtocol, ...defined(retryProtocol ?? {}) },
    };
  }
  if (update.analysisPlan) next.analysisPlan = { ...next.analysisPlan, ...defined(update.analysisPlan) };
  if (update.knowledgeBase) next.knowledgeBase = { ...next.knowledgeBase, ...defined(update.knowledgeBase) };
  if (update.timezone !== undefined) next.timezone = update.timezone;
  return next;
}

function defined<T extends object>(value: T): { [K in keyof T]-?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]-?: Exclude<T[K], undefined>;
  };
}

const storedDocumentSchema = z.object({
  name: z.string(),
  variant: z.object({ type: z.enum(VARIANT_TYPES), config: variantConfigSchema }),
  agent: z.object({
    identity: z.object({ name: z.string(), gender: z.enum(['male', 'female']), voice: z.string() }),
    systemPrompt: z.string(),
    firstMessage: z.string(),
    endMessage: z.string(),
    tools: z.array(z.object({ integration_id: z.string(), tools: z.array(z.string()) })),
  }),
  telephony: z.object({ inbound: z.string(), outbound: z.string() }),
  icpContext: z.object({
    targetAgeGroups: z.array(z.string()),
    locationTiers: z.array(z.string()),
    language: z.string(),
    targetAudience: z.array(z.string()),
  }),
  callSettings: z.object({
    slots: z.array(z.object({ startTime: z.string(), endTime: z.string() })),
    retryProtocol: z.object({
      maxAttemptsNoPickup: z.number(),
      maxAttemptsLowEngagement: z.number(),
      reAttemptPeriod: z.number(),
      maxRescheduleCount: z.number(),
    }),
    maxCallDuration: z.number(),
    concurrentCallCount: z.number(),
  }),
  analysisPlan: z.object({
    successCriteriaPlan: z.string(),
    summaryPlan: z.string(),
    callInsightPlan: z.record(z.string(), z.unknown()),
  }),
  knowledgeBase: z.object({
    documents: z.array(z.object({ url: z.string(), title: z.string(), type: z.string() })),
    faq: z.array(z.object({ question: z.string(), answer: z.string() })),
  }),
  archivedAt: z.string().nullable(),
  timezone: z.string(),
});

/** The one decoder of a stored v1 document (core/store/repos/v1.ts returns it untyped). */
export function storedDocument(document: unknown): AssistantDocument {
  return storedDocumentSchema.parse(document);
}

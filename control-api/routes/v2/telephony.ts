import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { NumberService } from '../../../core/telephony/numbers.ts';
import type { RentalService } from '../../../core/telephony/rental.ts';
import { RENTAL } from '../../../core/telephony/rules.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { idOf } from '../../schemas/common.ts';
import {
  availableNumberBody,
  availableNumberSchema,
  indianNumber,
  phoneNumberBody,
  phoneNumberSchema,
  quoteBody,
  quoteSchema,
  submissionBody,
  submissionSchema,
  submitBody,
} from '../../schemas/telephony.ts';

const tag = 'Number rental';

const requirementsSchema = z.object({
  object: z.literal('telephony_requirements'),
  country: z.literal('IN'),
  number_types: z.array(
    z.object({
      type: z.enum(['local', 'mobile']),
      documents: z.array(z.object({ type: z.string(), description: z.string() })),
      address_in_area: z.boolean(),
    }),
  ),
  submission: submissionSchema.nullable().describe('the latest documents sent and their review'),
});

export function registerTelephonyRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  rental: RentalService,
  numbers: NumberService,
): void {
  registerRoutes(app, registry, [
    requirementsRoute(rental),
    submitRoute(rental),
    refreshRoute(rental),
    searchRoute(rental),
    quoteRoute(rental),
    rentRoute(rental, numbers),
  ]);
}

function requirementsRoute(rental: RentalService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/telephony/requirements',
    operationId: 'getTelephonyRequirements',
    summary: 'What the regulator asks before numbers can be rented (per number type), and the review so far',
    tag,
    responses: { 200: { description: 'The requirements', schema: requirementsSchema } },
    errors: ['telephony_unavailable'],
    handler: async ({ auth }) => {
      const { numberTypes, submission } = await rental.requirements(auth.workspaceId);
      return {
        object: 'telephony_requirements' as const,
        country: 'IN' as const,
        number_types: numberTypes,
        submission: submission ? submissionBody(submission) : null,
      };
    },
  });
}

function submitRoute(rental: RentalService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/telephony/submit',
    operationId: 'submitTelephonyDocuments',
    summary:
      "Send the business's documents for review (status pending); 409 conflict while a review is pending or once approved",
    tag,
    body: submitBody,
    responses: { 201: { description: 'The submission', schema: submissionSchema } },
    errors: ['invalid_request', 'conflict', 'telephony_unavailable'],
    handler: async ({ auth, body, reply }) => {
      reply.code(201);
      return submissionBody(await rental.submit(auth.workspaceId, body));
    },
  });
}

function refreshRoute(rental: RentalService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/telephony/refresh',
    operationId: 'refreshTelephonyReview',
    summary: 'Read the review of the latest documents: pending, approved, or rejected with reasons',
    tag,
    body: z.object({}).strict(),
    bodyOptional: true,
    responses: { 200: { description: 'The submission', schema: submissionSchema } },
    errors: ['not_found', 'telephony_unavailable'],
    handler: async ({ auth }) => submissionBody(await rental.refresh(auth.workspaceId)),
  });
}

function searchRoute(rental: RentalService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/telephony/search',
    operationId: 'searchNumbers',
    summary: 'Numbers for rent (at most 20): area is an STD code (80 for Bengaluru), contains is digits',
    tag,
    query: z
      .object({
        area: z
          .string()
          .regex(/^[1-9][0-9]{1,3}$/, 'must be an STD code without the leading 0 (2-4 digits)')
          .optional(),
        contains: z
          .string()
          .regex(/^[0-9]{1,10}$/, 'must be 1-10 digits')
          .optional(),
      })
      .strict(),
    responses: {
      200: {
        description: 'Numbers for rent',
        schema: z.object({
          object: z.literal('list'),
          data: z.array(availableNumberSchema),
          has_more: z.literal(false),
          next_cursor: z.null(),
        }),
      },
    },
    errors: ['invalid_request', 'telephony_unavailable'],
    handler: async ({ auth, query }) => ({
      object: 'list' as const,
      data: (await rental.search(auth.workspaceId, query)).map((n) =>
        availableNumberBody(n, RENTAL.monthlyPaise),
      ),
      has_more: false as const,
      next_cursor: null,
    }),
  });
}

function quoteRoute(rental: RentalService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/telephony/quote',
    operationId: 'quoteNumber',
    summary:
      'The price of a number: ₹500 a month, paid ₹1,500 for three months; the quote is good 30 minutes',
    tag,
    body: z.object({ number: indianNumber }).strict(),
    responses: { 201: { description: 'The quote', schema: quoteSchema } },
    errors: ['invalid_request', 'not_found', 'telephony_unavailable'],
    handler: async ({ auth, body, reply }) => {
      reply.code(201);
      return quoteBody(await rental.quote(auth.workspaceId, body.number));
    },
  });
}

function rentRoute(rental: RentalService, numbers: NumberService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/telephony/rent',
    operationId: 'rentNumber',
    summary:
      'Rent a quoted number once the documents are approved: ₹1,500 leaves the wallet in the same transaction that creates the number (402 insufficient_balance otherwise)',
    tag,
    body: z.object({ number: indianNumber, quote_id: idOf('quote') }).strict(),
    responses: { 201: { description: 'The managed number', schema: phoneNumberSchema } },
    errors: ['invalid_request', 'insufficient_balance', 'not_found', 'conflict', 'telephony_unavailable'],
    handler: async ({ auth, body, reply }) => {
      const rented = await rental.rent(auth.workspaceId, body.number, body.quote_id);
      reply.code(201);
      return phoneNumberBody(await numbers.get(auth.workspaceId, rented.id));
    },
  });
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { callObject } from '../../../core/calls/representation.ts';
import { isoTime } from '../../../core/clock.ts';
import type { NumberService } from '../../../core/telephony/numbers.ts';
import type { SimulatedIncomingCalls } from '../../../core/telephony/simulated-calls.ts';
import { listBody, listEnvelope, listQuery, resolveCursor } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { callSchema, E164 } from '../../schemas/call.ts';
import { idOf, idParams, timestamp } from '../../schemas/common.ts';
import { phoneNumberBody, phoneNumberSchema, version } from '../../schemas/telephony.ts';

const tag = 'Phone numbers';
const params = idParams('phoneNumber');
const numberResponse = { 200: { description: 'The number at its new version', schema: phoneNumberSchema } };
const versionBody = z.object({ version }).strict();

function listNumbersRoute(numbers: NumberService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/phone-numbers',
    operationId: 'listPhoneNumbers',
    summary: "The workspace's numbers, newest first (cursor-paginated), with their health",
    tag,
    query: listQuery('phoneNumber'),
    responses: { 200: { description: 'A page of numbers', schema: listEnvelope(phoneNumberSchema) } },
    errors: ['invalid_request', 'telephony_unavailable'],
    handler: async ({ auth, query }) => {
      const after = resolveCursor(query, 'phoneNumber');
      const page = await numbers.list(auth.workspaceId, { limit: query.limit, ...(after ? { after } : {}) });
      return listBody(page.items.map(phoneNumberBody), page.hasMore, (n) => n.id);
    },
  });
}

function getNumberRoute(numbers: NumberService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/phone-numbers/:id',
    operationId: 'getPhoneNumber',
    summary: 'Read a number with its health (this hour’s attempts, seven days of answers)',
    tag,
    params,
    responses: { 200: { description: 'The number', schema: phoneNumberSchema } },
    errors: ['not_found', 'telephony_unavailable'],
    handler: async ({ auth, params: p }) => phoneNumberBody(await numbers.get(auth.workspaceId, p.id)),
  });
}

function updateNumberRoute(numbers: NumberService): RouteDefinition {
  return route({
    method: 'PATCH',
    url: '/phone-numbers/:id',
    operationId: 'updatePhoneNumber',
    summary: 'Assign the agent that answers the number (null: none); send the current version',
    tag,
    params,
    body: z.object({ agent_id: idOf('agent').nullable(), version }).strict(),
    responses: numberResponse,
    errors: ['invalid_request', 'not_found', 'conflict', 'telephony_unavailable'],
    handler: async ({ auth, params: p, body }) =>
      phoneNumberBody(await numbers.assignAgent(auth.workspaceId, p.id, body.agent_id, body.version)),
  });
}

function incomingRoute(numbers: NumberService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/phone-numbers/:id/incoming',
    operationId: 'setPhoneNumberIncoming',
    summary:
      'Turn incoming calls on (the provider sends them here; state ready, or error with setup_error) or off (state imported); needs an agent',
    tag,
    params,
    body: z.object({ enabled: z.boolean(), version }).strict(),
    responses: numberResponse,
    errors: ['invalid_request', 'not_found', 'conflict', 'telephony_unavailable'],
    handler: async ({ auth, params: p, body }) =>
      phoneNumberBody(await numbers.setIncoming(auth.workspaceId, p.id, body.enabled, body.version)),
  });
}

function healthRoutes(numbers: NumberService): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      url: '/phone-numbers/:id/rest',
      operationId: 'restPhoneNumber',
      summary:
        'Rest the number: pools skip it for `minutes` (15-10080, default 45); it still answers calls to it',
      tag,
      params,
      body: z.object({ version, minutes: z.number().int().min(15).max(10_080).optional() }).strict(),
      responses: numberResponse,
      errors: ['invalid_request', 'not_found', 'conflict', 'telephony_unavailable'],
      handler: async ({ auth, params: p, body }) =>
        phoneNumberBody(await numbers.rest(auth.workspaceId, p.id, body.version, body.minutes)),
    }),
    route({
      method: 'POST',
      url: '/phone-numbers/:id/resume',
      operationId: 'resumePhoneNumber',
      summary: 'End a rest or a cool-down (409 conflict for a retired number)',
      tag,
      params,
      body: versionBody,
      responses: numberResponse,
      errors: ['invalid_request', 'not_found', 'conflict', 'telephony_unavailable'],
      handler: async ({ auth, params: p, body }) =>
        phoneNumberBody(await numbers.resume(auth.workspaceId, p.id, body.version)),
    }),
    route({
      method: 'POST',
      url: '/phone-numbers/:id/retire',
      operationId: 'retirePhoneNumber',
      summary: 'Retire the number: it places no more calls; it still answers calls to it',
      tag,
      params,
      body: versionBody,
      responses: numberResponse,
      errors: ['invalid_request', 'not_found', 'conflict', 'telephony_unavailable'],
      handler: async ({ auth, params: p, body }) =>
        phoneNumberBody(await numbers.retire(auth.workspaceId, p.id, body.version)),
    }),
  ];
}

function deleteNumberRoute(numbers: NumberService): RouteDefinition {
  return route({
    method: 'DELETE',
    url: '/phone-numbers/:id',
    operationId: 'deletePhoneNumber',
    summary:
      'A managed number stops renewing and is released at the end of its paid period; a customer number is forgotten',
    tag,
    params,
    responses: {
      200: {
        description: 'Deleted',
        schema: z.object({
          id: z.string(),
          object: z.literal('phone_number'),
          deleted: z.literal(true),
          releases_at: timestamp,
        }),
      },
    },
    errors: ['not_found', 'telephony_unavailable'],
    handler: async ({ auth, params: p }) => {
      const removal = await numbers.remove(auth.workspaceId, p.id);
      return {
        id: removal.id,
        object: 'phone_number' as const,
        deleted: true as const,
        releases_at: isoTime(removal.releasesAt),
      };
    },
  });
}

function simulateIncomingRoute(simulated: SimulatedIncomingCalls): RouteDefinition {
  return route({
    method: 'POST',
    url: '/phone-numbers/:id/simulate-incoming',
    operationId: 'simulateIncomingCall',
    summary:
      "Sandbox workspaces: ring a sandbox number like a caller would. The call (direction inbound) is answered by the number's agent and a simulated caller converses over the Twilio media protocol",
    tag,
    params,
    body: z
      .object({
        from: z
          .string()
          .regex(E164, 'must be an E.164 number such as +919876543210')
          .describe("the simulated caller's number"),
      })
      .strict(),
    responses: {
      201: {
        description: 'The incoming call, ringing (dialing); it goes on as any call',
        schema: callSchema,
      },
    },
    errors: [
      'invalid_request',
      'not_found',
      'conflict',
      'insufficient_balance',
      'rate_limited',
      'telephony_unavailable',
    ],
    handler: async ({ auth, params: p, body, reply }) => {
      const call = await simulated.ring(auth.workspaceId, p.id, body.from);
      reply.code(201);
      return callObject(call);
    },
  });
}

function importNumberRoute(numbers: NumberService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/phone-numbers/import',
    operationId: 'importPhoneNumber',
    summary:
      "Import a +91 number of the customer's own Twilio account: Twilio must list it on that account; the credentials are kept encrypted, never shown again. State imported, ownership customer",
    tag,
    body: z
      .object({
        number: z.string().max(16).describe('E.164, +91 and ten digits'),
        provider: z.literal('twilio'),
        account_sid: z
          .string()
          .regex(/^AC[0-9a-fA-F]{32}$/, 'must be a Twilio account SID (AC and 32 hex digits)'),
        auth_token: z.string().min(1).max(128).describe('the account’s auth token; stored encrypted'),
      })
      .strict(),
    responses: { 201: { description: 'The imported number', schema: phoneNumberSchema } },
    errors: ['invalid_request', 'conflict', 'telephony_unavailable', 'service_unavailable'],
    handler: async ({ auth, body, reply }) => {
      const imported = await numbers.importTwilio(auth.workspaceId, {
        number: body.number,
        accountSid: body.account_sid,
        authToken: body.auth_token,
      });
      reply.code(201);
      return phoneNumberBody(imported);
    },
  });
}

export function registerPhoneNumberRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  numbers: NumberService,
  simulated: SimulatedIncomingCalls,
): void {
  registerRoutes(app, registry, [
    importNumberRoute(numbers),
    simulateIncomingRoute(simulated),
    listNumbersRoute(numbers),
    getNumberRoute(numbers),
    updateNumberRoute(numbers),
    incomingRoute(numbers),
    ...healthRoutes(numbers),
    deleteNumberRoute(numbers),
  ]);
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isoTime } from '../../../core/clock.ts';
import {
  SECRET_LIMITS,
  SECRET_NAME,
  type SecretInfo,
  type SecretService,
} from '../../../core/secrets/service.ts';
import { listBody, listEnvelope, pageCursor, pageLimit, resolveKeyCursor } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { timestamp } from '../../schemas/common.ts';

const secretName = z
  .string()
  .regex(SECRET_NAME, 'must match ^[a-z][a-z0-9_]{0,63}$ (lowercase letters, digits and _)')
  .describe('What tool templates call it: {{ secrets.<name> }}');
const secretValue = z
  .string()
  .min(1)
  .max(SECRET_LIMITS.valueBytes)
  .describe(`The value (at most ${SECRET_LIMITS.valueBytes} bytes); stored encrypted, never returned`);

const secretSchema = z.object({
  object: z.literal('secret'),
  name: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});

const nameParams = z.object({ name: secretName });

const secretBody = (s: SecretInfo) => ({
  object: 'secret' as const,
  name: s.name,
  created_at: isoTime(s.createdAt),
  updated_at: isoTime(s.updatedAt),
});

const tag = 'Secrets';

/** `/v2/secrets`: credentials for tool templates. Values go in and never come back out. */
export function registerSecretRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  secrets: SecretService,
): void {
  registerRoutes(app, registry, [
    createSecretRoute(secrets),
    listSecretsRoute(secrets),
    getSecretRoute(secrets),
    replaceSecretRoute(secrets),
    deleteSecretRoute(secrets),
  ]);
}

function createSecretRoute(secrets: SecretService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/secrets',
    operationId: 'createSecret',
    summary: `Store a secret for tool templates (at most ${SECRET_LIMITS.perWorkspace} a workspace); 409 when the name exists`,
    tag,
    body: z.object({ name: secretName, value: secretValue }).strict(),
    responses: { 201: { description: 'The secret, without its value', schema: secretSchema } },
    errors: ['invalid_request', 'conflict'],
    handler: async ({ auth, body, reply }) => {
      reply.code(201);
      return secretBody(await secrets.create(auth.workspaceId, body.name, body.value));
    },
  });
}

function listSecretsRoute(secrets: SecretService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/secrets',
    operationId: 'listSecrets',
    summary: 'List secrets by name (names and times only; cursor-paginated)',
    tag,
    query: z
      .object({ limit: pageLimit, starting_after: secretName.optional(), cursor: pageCursor.optional() })
      .strict(),
    responses: { 200: { description: 'A page of secrets', schema: listEnvelope(secretSchema) } },
    errors: ['invalid_request'],
    handler: async ({ auth, query }) => {
      const after = resolveKeyCursor(query, SECRET_NAME);
      const page = await secrets.list(auth.workspaceId, { limit: query.limit, ...(after ? { after } : {}) });
      return listBody(page.items.map(secretBody), page.hasMore, (s) => s.name);
    },
  });
}

function getSecretRoute(secrets: SecretService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/secrets/:name',
    operationId: 'getSecret',
    summary: 'Read a secret (name and times, never the value)',
    tag,
    params: nameParams,
    responses: { 200: { description: 'The secret', schema: secretSchema } },
    errors: ['invalid_request', 'not_found'],
    handler: async ({ auth, params }) => secretBody(await secrets.get(auth.workspaceId, params.name)),
  });
}

function replaceSecretRoute(secrets: SecretService): RouteDefinition {
  return route({
    method: 'PUT',
    url: '/secrets/:name',
    operationId: 'replaceSecret',
    summary: "Replace a secret's value; tools use the new value from their next run",
    tag,
    params: nameParams,
    body: z.object({ value: secretValue }).strict(),
    responses: { 200: { description: 'The secret, without its value', schema: secretSchema } },
    errors: ['invalid_request', 'not_found'],
    handler: async ({ auth, params, body }) =>
      secretBody(await secrets.replace(auth.workspaceId, params.name, body.value)),
  });
}

function deleteSecretRoute(secrets: SecretService): RouteDefinition {
  return route({
    method: 'DELETE',
    url: '/secrets/:name',
    operationId: 'deleteSecret',
    summary: 'Delete a secret; 409 conflict (naming the agents) while a tool of a live agent uses it',
    tag,
    params: nameParams,
    responses: {
      200: {
        description: 'Deleted',
        schema: z.object({ name: z.string(), object: z.literal('secret'), deleted: z.literal(true) }),
      },
    },
    errors: ['invalid_request', 'not_found', 'conflict'],
    handler: async ({ auth, params }) => {
      await secrets.remove(auth.workspaceId, params.name);
      return { name: params.name, object: 'secret' as const, deleted: true as const };
    },
  });
}

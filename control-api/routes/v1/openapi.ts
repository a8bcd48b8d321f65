import { z } from 'zod';
import type { V1RegisteredRoute, V1Registry } from './http.ts';

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Bad request: a field is invalid (the message names it), or the wallet cannot cover the call',
  '401': 'Missing or invalid x-public-key / x-private-key',
  '403': 'The keys have no access to the `workspace` sent',
  '404': 'No such assistant or call in the workspace',
  '429': 'Rate limit exceeded, or an assistant update inside its cooldown; see Retry-After',
  '500': 'Internal error; retry with backoff',
};

const errorBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/V1Error' } } } };

function responsesOf(route: V1RegisteredRoute): Record<string, JsonSchema> {
  const success = route.bare
    ? z.object({ message: z.string(), data: route.data ?? z.unknown() })
    : z.object({ status_code: z.number().int(), message: z.string(), data: route.data ?? z.unknown() });
  const responses: Record<string, JsonSchema> =
    route.status === 501
      ? { '501': { description: 'Not live yet', ...errorBody } }
      : {
          [String(route.status)]: {
            description: 'Success',
            content: { 'application/json': { schema: toSchema(success, 'output') } },
          },
        };
  for (const [status, description] of Object.entries(ERROR_STATUSES)) {
    if (!route.auth && (status === '401' || status === '403')) continue;
    responses[status] = { description, ...errorBody };
  }
  return responses;
}

function parametersOf(route: V1RegisteredRoute): JsonSchema[] {
  const params = route.params ? toSchema(route.params, 'input') : undefined;
  return [
    ...Object.entries((params?.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => ({
      name,
      in: 'path',
      required: true,
      schema,
    })),
    ...(route.auth
      ? [
          {
            name: 'workspace',
            in: 'header',
            required: false,
            schema: { type: 'string' },
            description: "The workspace addressed; the keys' own when left out",
          },
        ]
      : []),
  ];
}

/** The legacy v1 product's own OpenAPI 3.1 document (`GET /v1/openapi.json` on the v1 host). */
export function buildV1OpenApi(registry: V1Registry): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of registry.routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.auth ? {} : { security: [] }),
      parameters: parametersOf(route),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: toSchema(route.body, 'input') } },
            },
          }
        : {}),
      responses: responsesOf(route),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Voice agent platform, legacy v1',
      version: 'v1',
      description:
        'The legacy v1 product, served on its own host. Success bodies are `{status_code, message, data}` (the assistant list: `{message, data}`); errors `{code: <HTTP status>, message}`. v1 webhooks: see the README.',
    },
    security: [{ publicKey: [], privateKey: [] }],
    paths,
    components: {
      securitySchemes: {
        publicKey: { type: 'apiKey', in: 'header', name: 'x-public-key' },
        privateKey: { type: 'apiKey', in: 'header', name: 'x-private-key' },
      },
      schemas: {
        V1Error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'integer', description: 'The HTTP status' },
            message: { type: 'string' },
          },
        },
      },
    },
  };
}

import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode } from '../core/errors.ts';
import type { RegisteredRoute, RouteRegistry } from './http/route.ts';
import { errorEnvelope, validationErrorBody } from './schemas/common.ts';

export const API_VERSION = '2026-10-15.analysis-templates';

type JsonSchema = Record<string, unknown>;

/** Codes any route can answer (the HTTP layer's limits), any authenticated route, and any route with input. */
const EVERY_ROUTE_ERRORS: readonly ErrorCode[] = [
  'request_timeout',
  'headers_too_large',
  'service_unavailable',
];
const AUTHENTICATED_ERRORS: readonly ErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited', 'internal'];
const INPUT_ERRORS: readonly ErrorCode[] = ['invalid_request'];
const BODY_ERRORS: readonly ErrorCode[] = ['invalid_request', 'body_too_large'];

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function parameters(route: RegisteredRoute) {
  const out: JsonSchema[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input');
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required ?? []) as string[]);
    for (const [name, property] of Object.entries(properties)) {
      out.push({ name, in: where, required: where === 'path' || required.has(name), schema: property });
    }
  }
  return out;
}

function errorResponses(route: RegisteredRoute): Record<string, JsonSchema> {
  const codes = new Set<ErrorCode>(route.errors);
  for (const c of EVERY_ROUTE_ERRORS) codes.add(c);
  if (route.auth) for (const c of AUTHENTICATED_ERRORS) codes.add(c);
  if (route.query) for (const c of INPUT_ERRORS) codes.add(c);
  if (route.body) for (const c of BODY_ERRORS) codes.add(c);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, JsonSchema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const flat = list.filter((c) => c === 'invalid_flow' || c === 'invalid_tools');
    const schema =
      flat.length > 0
        ? {
            oneOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/ValidationError' }],
          }
        : { $ref: '#/components/schemas/Error' };
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].description}`).join(' '),
      'x-error-codes': list,
      ...(status === 429 || status === 503
        ? { headers: { 'Retry-After': { schema: { type: 'integer' } } } }
        : {}),
      content: { 'application/json': { schema } },
    };
  }
  return out;
}

/** The OpenAPI 3.1 document of every route in the registry, generated from the same zod schemas that validate. */
export function buildOpenApi(registry: RouteRegistry, options: { serverUrl?: string } = {}): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of registry.routes) {
    const path = openApiPath(route.url);
    const responses: Record<string, JsonSchema> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema
          ? { content: { 'application/json': { schema: toSchema(response.schema, 'output') } } }
          : {}),
      };
    }
    Object.assign(responses, errorResponses(route));
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.auth ? {} : { security: [] }),
      parameters: parameters(route),
      ...(route.body
        ? {
            requestBody: {
              required: !route.bodyOptional,
              content: {
                'application/json': { schema: toSchema(route.body, 'input') },
                ...(route.streamedBody
                  ? Object.fromEntries(
                      [route.streamedBody.contentType, ...(route.streamedBody.otherContentTypes ?? [])].map(
                        (type) => [
                          type,
                          { schema: { type: 'string', description: route.streamedBody?.description } },
                        ],
                      ),
                    )
                  : {}),
              },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Voice agent platform API',
      version: API_VERSION,
      description:
        'AI voice agents that place and answer phone and browser calls, billed against a prepaid wallet. ' +
        'Every error is `{error:{code,message}}` (flow and tool validation: `{error, details}`); branch on `code`.',
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A workspace secret key: sk_live_ + 32 hex',
        },
      },
      schemas: {
        Error: toSchema(errorEnvelope, 'output'),
        ValidationError: toSchema(validationErrorBody, 'output'),
        ErrorCode: {
          type: 'string',
          enum: Object.keys(ERROR_CATALOGUE),
          description: 'Open enum: new codes appear without a version bump; default on the HTTP status.',
          'x-statuses': Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([c, v]) => [c, v.status])),
        },
      },
    },
  };
}

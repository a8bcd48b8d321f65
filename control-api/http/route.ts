import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError, type ErrorCode } from '../../core/errors.ts';
import { type AuthContext, authOf } from '../plugins/auth.ts';
import { parseOrThrow } from './validation.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type AnyObjectSchema = z.ZodType<Record<string, unknown>>;

export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  headers?: Record<string, string>;
}

export interface RouteSpec<P extends AnyObjectSchema, Q extends AnyObjectSchema, B extends z.ZodType> {
  method: Method;
  /**
   * Fastify path syntax, relative to the plugin the route is defined in (`/agents/:id` in the v2 plugin);
   * the OpenAPI document shows the full path with `{id}`.
   */
  url: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Authenticated with a v2 Bearer key (default true). */
  auth?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** Body may be absent (empty POST); validated when present. */
  bodyOptional?: boolean;
  /**
   * Another content type the route takes as a stream (its scope registers a parser that passes the request
   * through): such a body is not validated here, the handler reads `request.body` itself.
   */
  streamedBody?: StreamedBody;
  responses: Record<number, RouteResponse>;
  /** Error codes this route can answer, besides the ones every authenticated route can. */
  errors: readonly ErrorCode[];
  handler: (ctx: {
    params: z.output<P>;
    query: z.output<Q>;
    body: z.output<B>;
    auth: AuthContext;
    request: FastifyRequest;
    reply: FastifyReply;
  }) => Promise<unknown>;
}

export interface StreamedBody {
  contentType: string;
  description: string;
  /** More content types taken the same way (the OpenAPI document lists each with the same description). */
  otherContentTypes?: readonly string[];
}

export interface RegisteredRoute {
  method: Method;
  url: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: boolean;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  bodyOptional: boolean;
  streamedBody?: StreamedBody;
  responses: Record<number, RouteResponse>;
  errors: readonly ErrorCode[];
}

/** Every route the API serves, in registration order; the OpenAPI document is generated from it. */
export class RouteRegistry {
  readonly routes: RegisteredRoute[] = [];
}

/** A route ready to be registered on a Fastify instance: an entry of a route table. */
export type RouteDefinition = (app: FastifyInstance, registry: RouteRegistry) => void;

/** A route table entry; the table's routes are registered with `registerRoutes`. */
export function route<
  P extends AnyObjectSchema = AnyObjectSchema,
  Q extends AnyObjectSchema = AnyObjectSchema,
  B extends z.ZodType = z.ZodUndefined,
>(spec: RouteSpec<P, Q, B>): RouteDefinition {
  return (app, registry) => defineRoute(app, registry, spec);
}

export function registerRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  table: readonly RouteDefinition[],
): void {
  for (const define of table) define(app, registry);
}

/** Registers a route on `app` whose params, query and body are parsed by their zod schemas. */
export function defineRoute<
  P extends AnyObjectSchema = AnyObjectSchema,
  Q extends AnyObjectSchema = AnyObjectSchema,
  B extends z.ZodType = z.ZodUndefined,
>(app: FastifyInstance, registry: RouteRegistry, spec: RouteSpec<P, Q, B>): void {
  const needsAuth = spec.auth ?? true;
  if (app.prefix && spec.url.startsWith(`${app.prefix}/`)) {
    throw new Error(`${spec.operationId}: url ${spec.url} repeats the plugin's prefix ${app.prefix}`);
  }
  registry.routes.push({
    method: spec.method,
    url: `${app.prefix}${spec.url}`,
    operationId: spec.operationId,
    summary: spec.summary,
    tag: spec.tag,
    auth: needsAuth,
    params: spec.params,
    query: spec.query,
    body: spec.body,
    bodyOptional: spec.bodyOptional ?? false,
    ...(spec.streamedBody ? { streamedBody: spec.streamedBody } : {}),
    responses: spec.responses,
    errors: spec.errors,
  });
  app.route({
    method: spec.method,
    url: spec.url,
    config: { authenticated: needsAuth },
    handler: async (request, reply) => {
      const params = spec.params ? parseOrThrow(spec.params, request.params, '', 'path parameter') : {};
      const query = spec.query ? parseOrThrow(spec.query, request.query ?? {}, '', 'query parameter') : {};
      let body: unknown;
      if (spec.body && !isStreamed(request, spec.streamedBody)) {
        // An absent body and an empty one (even with a JSON Content-Type) are the same: no body.
        const raw = request.body;
        if (raw === undefined && !spec.bodyOptional) {
          throw new ApiError('invalid_request', 'body: is required (a JSON object)');
        }
        body = raw === undefined ? undefined : parseOrThrow(spec.body, raw, '');
      }
      const result = await spec.handler({
        params: params as z.output<P>,
        query: query as z.output<Q>,
        body: body as z.output<B>,
        auth: needsAuth ? authOf(request) : { workspaceId: '', keyId: '' },
        request,
        reply,
      });
      if (reply.sent) return reply;
      return result;
    },
  });
}

function isStreamed(request: FastifyRequest, streamed: StreamedBody | undefined): boolean {
  if (streamed === undefined) return false;
  const type = (request.headers['content-type'] ?? '').toLowerCase();
  return [streamed.contentType, ...(streamed.otherContentTypes ?? [])].some((t) => type.startsWith(t));
}

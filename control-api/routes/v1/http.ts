import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Coordinator } from '../../../core/coord/types.ts';
import { isCoordinatorUnavailable } from '../../../core/coord/unavailable.ts';
import { ApiError, isApiError } from '../../../core/errors.ts';
import type { Store } from '../../../core/store/types.ts';
import { isStoreUnavailable } from '../../../core/store/unavailable.ts';
import type { V1Keys } from '../../../core/v1/keys.ts';
import { parseOrThrow } from '../../http/validation.ts';
import { keyRateLimiter } from '../../plugins/rate-limit.ts';

/** Who a v1 request is: the organization's public key and the workspace it addresses. */
export interface V1Auth {
  publicKey: string;
  workspaceId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    v1Auth?: V1Auth;
  }
  interface FastifyContextConfig {
    /** A route of the legacy v1 product (served on the v1 host only). */
    v1?: boolean;
    v1Authenticated?: boolean;
  }
}

/** The statuses v1 answers (interface "v1 errors"), and 501 for what is not built. */
const V1_STATUSES = new Set([400, 401, 403, 404, 429, 500, 501]);

/**
 * A v1 error body, `{code: <HTTP status>, message}`. Statuses v1 never had are told in the nearest one it has:
 * 402 (wallet), 409 (state), 413 (body size) are 400s, 503 is a 500; the message says what happened.
 */
export function sendV1Error(reply: FastifyReply, error: ApiError): FastifyReply {
  const answer = v1ErrorAnswer(error);
  if (error.retryAfterSecs !== undefined) reply.header('retry-after', String(error.retryAfterSecs));
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}

/** The status and `{code, message}` body of an error told to a v1 client. */
export function v1ErrorAnswer(error: ApiError): { status: number; body: { code: number; message: string } } {
  const status = V1_STATUSES.has(error.status) ? error.status : error.status >= 500 ? 500 : 400;
  return { status, body: { code: status, message: error.message } };
}

function translate(error: FastifyError, bodyLimitBytes: number): ApiError | undefined {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ApiError('body_too_large', `body: larger than the ${bodyLimitBytes}-byte limit`);
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ApiError('invalid_request', 'Content-Type: must be application/json');
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new ApiError('invalid_request', 'body: empty, but Content-Type is application/json');
  if (error instanceof SyntaxError || (error.statusCode !== undefined && error.statusCode < 500))
    return new ApiError('invalid_request', 'body: malformed JSON');
  return undefined;
}

/** Every error of a v1 route leaves in v1's body; faults are logged without the request's keys. */
export function setV1ErrorHandler(app: FastifyInstance, bodyLimitBytes: number): void {
  app.setErrorHandler((raw: FastifyError, request, reply) => {
    if (isApiError(raw)) return sendV1Error(reply, raw);
    const translated = translate(raw, bodyLimitBytes);
    if (translated) return sendV1Error(reply, translated);
    if (isStoreUnavailable(raw) || isCoordinatorUnavailable(raw)) {
      request.log.warn({ err: raw, route: request.routeOptions.url }, 'v1: store or coordinator unreachable');
      return sendV1Error(
        reply,
        new ApiError('service_unavailable', 'briefly unavailable; retry after a moment', {
          retryAfterSecs: 2,
        }),
      );
    }
    request.log.error({ err: raw, route: request.routeOptions.url }, 'v1 request failed');
    return sendV1Error(reply, new ApiError('internal', 'internal error; retry with backoff'));
  });
}

/** Header values longer than any key are refused before touching the store. */
const MAX_KEY_CHARS = 128;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
}

/**
 * v1 authentication: `x-public-key` and `x-private-key` (missing or invalid: 401), and `workspace` when sent
 * (a workspace the keys have no right to: 403). Without `workspace`, the keys' own workspace. A private key
 * proved here is sealed for signing the organization's webhooks (core/v1/keys.ts). An organization may address
 * its own workspace and those it onboarded.
 */
export function registerV1Auth(app: FastifyInstance, store: Store, keys: V1Keys): void {
  const sealed = new Set<string>();
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config?.v1Authenticated) return;
    const publicKey = header(request, 'x-public-key');
    const privateKey = header(request, 'x-private-key');
    if (!publicKey || !privateKey) {
      throw new ApiError('unauthorized', 'missing x-public-key or x-private-key header');
    }
    if (publicKey.length > MAX_KEY_CHARS || privateKey.length > MAX_KEY_CHARS) {
      throw new ApiError('unauthorized', 'invalid x-public-key or x-private-key');
    }
    const credentials = await store.secrets.verifyV1Credentials(publicKey, privateKey);
    if (!credentials) throw new ApiError('unauthorized', 'invalid x-public-key or x-private-key');
    const workspace = header(request, 'workspace');
    if (
      workspace !== undefined &&
      workspace !== credentials.workspaceId &&
      (workspace.length > MAX_KEY_CHARS || !(await store.v1.hasAccess(publicKey, workspace)))
    ) {
      throw new ApiError('forbidden', 'these keys have no access to that workspace');
    }
    if (!sealed.has(publicKey)) {
      await keys.remember(publicKey, credentials.workspaceId, privateKey);
      sealed.add(publicKey);
    }
    request.v1Auth = { publicKey, workspaceId: workspace ?? credentials.workspaceId };
  });
}

/** v1's request rate, per organization key, in the coordinator (a local budget while Redis is away). */
export function registerV1RateLimit(
  app: FastifyInstance,
  coord: Coordinator,
  limits: { ratePerSec: number; burst: number },
): void {
  const take = keyRateLimiter(coord, limits);
  app.addHook('preHandler', async (request) => {
    const auth = request.v1Auth;
    if (!auth) return;
    const result = await take(`v1:key:${auth.publicKey}`);
    if (result.allowed) return;
    const retryAfterSecs = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
    throw new ApiError(
      'rate_limited',
      `rate limit exceeded (${limits.ratePerSec} requests a second, burst ${limits.burst}); retry after ${retryAfterSecs} seconds`,
      { retryAfterSecs },
    );
  });
}

/**
 * Which product a request is for: v1 when its `Host` (without the port) is `V1_HOST`, or when it came in on
 * `V1_PORT`. A Fastify constraint, so the v1 routes (some of which share paths with nothing in v2, some of
 * which are under `/v2/call/`) are only found for v1 requests.
 */
export class ProductOfRequest {
  private readonly v1Requests = new WeakSet<IncomingMessage>();

  constructor(private readonly v1Host: string | undefined) {}

  /** Marks a request that arrived on the v1 port. */
  markV1(raw: IncomingMessage): void {
    this.v1Requests.add(raw);
  }

  isV1(raw: IncomingMessage): boolean {
    if (this.v1Requests.has(raw)) return true;
    if (!this.v1Host) return false;
    const host = raw.headers.host ?? '';
    return hostname(host) === this.v1Host.toLowerCase();
  }

  /** The find-my-way constraint strategy `product`. */
  strategy() {
    const store = new Map<string, unknown>();
    return {
      name: 'product',
      storage: () => ({
        get: (value: string) => (store.get(value) ?? null) as never,
        set: (value: string, handlers: unknown) => {
          store.set(value, handlers);
        },
      }),
      deriveConstraint: (raw: IncomingMessage) => (this.isV1(raw) ? 'v1' : 'v2'),
      mustMatchWhenDerived: false,
    };
  }
}

function hostname(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  const colon = lower.lastIndexOf(':');
  return colon >= 0 ? lower.slice(0, colon) : lower;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a v1 handler answers: `{status_code, message, data}` (or `{message, data}` where the interface shows it). */
export interface V1Answer {
  status?: 200 | 201;
  message: string;
  data: unknown;
  /** Fields beside `status_code`, `message` and `data` (the call routes repeat `callId` and `status` there). */
  extra?: Record<string, unknown>;
  /** The list's shape: `{message, data}` only. */
  bare?: boolean;
}

export interface V1RouteSpec<P extends z.ZodType, B extends z.ZodType> {
  method: Method;
  url: string;
  operationId: string;
  summary: string;
  tag: string;
  auth?: boolean;
  params?: P;
  body?: B;
  bodyOptional?: boolean;
  /** Schema of `data` in the success body, for `/v1/openapi.json`. */
  data?: z.ZodType;
  status?: 200 | 201 | 501;
  handler: (ctx: {
    params: z.output<P>;
    body: z.output<B>;
    auth: V1Auth;
    request: FastifyRequest;
    reply: FastifyReply;
  }) => Promise<V1Answer>;
}

export interface V1RegisteredRoute {
  method: Method;
  url: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: boolean;
  params?: z.ZodType;
  body?: z.ZodType;
  data?: z.ZodType;
  status: number;
  bare: boolean;
}

/** The routes of the v1 product, for its own OpenAPI document. */
export class V1Registry {
  readonly routes: V1RegisteredRoute[] = [];
}

export function v1Route<P extends z.ZodType = z.ZodUndefined, B extends z.ZodType = z.ZodUndefined>(
  app: FastifyInstance,
  registry: V1Registry,
  spec: V1RouteSpec<P, B>,
  options: { bare?: boolean } = {},
): void {
  const authenticated = spec.auth ?? true;
  registry.routes.push({
    method: spec.method,
    url: spec.url,
    operationId: spec.operationId,
    summary: spec.summary,
    tag: spec.tag,
    auth: authenticated,
    ...(spec.params ? { params: spec.params } : {}),
    ...(spec.body ? { body: spec.body } : {}),
    ...(spec.data ? { data: spec.data } : {}),
    status: spec.status ?? 200,
    bare: options.bare ?? false,
  });
  app.route({
    method: spec.method,
    url: spec.url,
    constraints: { product: 'v1' },
    config: { v1: true, v1Authenticated: authenticated },
    handler: async (request, reply) => {
      const params = spec.params
        ? parseOrThrow(spec.params, request.params, '', 'path parameter')
        : undefined;
      let body: unknown;
      if (spec.body) {
        if (request.body === undefined && !spec.bodyOptional) {
          throw new ApiError('invalid_request', 'body: is required (a JSON object)');
        }
        body = request.body === undefined ? undefined : parseOrThrow(spec.body, request.body, '');
      }
      const auth = request.v1Auth ?? { publicKey: '', workspaceId: '' };
      const answer = await spec.handler({
        params: params as z.output<P>,
        body: body as z.output<B>,
        auth,
        request,
        reply,
      });
      if (reply.sent) return reply;
      const status = answer.status ?? 200;
      reply.code(status);
      if (answer.bare) return { message: answer.message, data: answer.data };
      return { status_code: status, message: answer.message, data: answer.data, ...answer.extra };
    },
  });
}

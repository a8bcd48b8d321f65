import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { isCoordinatorUnavailable } from '../../core/coord/unavailable.ts';
import { ApiError, isApiError } from '../../core/errors.ts';
import { isStoreUnavailable } from '../../core/store/unavailable.ts';

/** How long a client waits before retrying while the database or Redis is away: such outages last seconds. */
const STORE_RETRY_AFTER_SECS = 2;

/** Fastify's own failures (parsing, limits) in the words of the interface. */
function translateFastifyError(error: FastifyError, bodyLimitBytes: number): ApiError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'body: malformed JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'body: empty, but Content-Type is application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('body_too_large', `body: larger than the ${bodyLimitBytes}-byte limit`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_request', 'Content-Type: must be application/json');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new ApiError('invalid_request', 'url: malformed');
    default:
      break;
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new ApiError('invalid_request', 'body: malformed JSON');
  }
  return undefined;
}

/** The status and body an error leaves with. */
export interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * The shape of an error for the product a request is for (v2's envelope, v1's `{code, message}`): answers given
 * outside any product's routes (before routing, while closing, past the deadline) take it from the request.
 */
export type ErrorShape = (raw: IncomingMessage | undefined, error: ApiError) => ErrorAnswer;

/** The spec's error envelope, whatever the request. */
export const envelopeShape: ErrorShape = (_raw, error) => ({ status: error.status, body: error.toBody() });

/** Errors Fastify raises before routing (malformed or oversized URLs), in the request's product's shape. */
export function frameworkErrorHandlerOf(shape: ErrorShape) {
  return (error: FastifyError, request: { raw: IncomingMessage }, reply: FastifyReply): void => {
    const message =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'url: a path parameter is longer than any id'
        : 'url: malformed';
    sendApiError(reply, new ApiError('invalid_request', message), shape, request.raw);
  };
}

/** Errors Fastify raises before routing, in the envelope. */
export const frameworkErrorHandler = frameworkErrorHandlerOf(envelopeShape);

const sendShaped = (reply: FastifyReply, error: ApiError, shape: ErrorShape) =>
  sendApiError(reply, error, shape);

export function sendApiError(
  reply: FastifyReply,
  error: ApiError,
  shape: ErrorShape = envelopeShape,
  raw: IncomingMessage | undefined = reply.request?.raw,
): FastifyReply {
  if (error.retryAfterSecs !== undefined) reply.header('retry-after', String(error.retryAfterSecs));
  const answer = shape(raw, error);
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}

/** Every error leaves as the spec's envelope; faults are logged with their stack, never with request secrets. */
export function setEnvelopeErrorHandler(
  app: FastifyInstance,
  options: { bodyLimitBytes: number; shape?: ErrorShape },
): void {
  const shape = options.shape ?? envelopeShape;
  const sendApiError = (reply: FastifyReply, error: ApiError) => sendShaped(reply, error, shape);
  app.setErrorHandler((rawError: FastifyError, request, reply) => {
    if (isApiError(rawError)) return sendApiError(reply, rawError);
    const translated = translateFastifyError(rawError, options.bodyLimitBytes);
    if (translated) return sendApiError(reply, translated);
    if (isStoreUnavailable(rawError)) {
      request.log.warn({ err: rawError, route: request.routeOptions.url }, 'database unreachable');
      return sendApiError(
        reply,
        new ApiError('service_unavailable', 'the database is briefly unreachable; retry after a moment', {
          retryAfterSecs: STORE_RETRY_AFTER_SECS,
        }),
      );
    }
    if (isCoordinatorUnavailable(rawError)) {
      request.log.warn({ err: rawError, route: request.routeOptions.url }, 'coordinator unreachable');
      return sendApiError(
        reply,
        new ApiError(
          'service_unavailable',
          'the coordinator (Redis) is briefly unreachable; retry after a moment',
          {
            retryAfterSecs: STORE_RETRY_AFTER_SECS,
          },
        ),
      );
    }
    request.log.error({ err: rawError, route: request.routeOptions.url }, 'request failed');
    return sendApiError(reply, new ApiError('internal', 'internal error; retry with backoff'));
  });
}

/** An unknown route under a product's prefix, in that product's envelope. */
export function setEnvelopeNotFound(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) =>
    sendApiError(reply, new ApiError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
}

/**
 * The server's own error handling, outside any product: errors of its own routes (health, recordings, carrier
 * callbacks) in the envelope, a plain 404 for a path no product serves (no product's envelope claims it), and
 * 503 while closing.
 */
export function registerErrorHandling(
  app: FastifyInstance,
  options: { bodyLimitBytes: number; shape?: ErrorShape },
): void {
  setEnvelopeErrorHandler(app, options);
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).type('text/plain; charset=utf-8').send('not found'),
  );
  refuseRequestsWhileClosing(app, options.shape ?? envelopeShape);
}

/** While the server drains, new requests (on kept-alive connections) are sent elsewhere: 503 in the envelope. */
function refuseRequestsWhileClosing(app: FastifyInstance, shape: ErrorShape): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    return sendApiError(
      reply,
      new ApiError('service_unavailable', 'this server is shutting down; retry', { retryAfterSecs: 1 }),
      shape,
    );
  });
}

import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../core/errors.ts';
import { type ErrorShape, envelopeShape, sendApiError } from './errors.ts';

/**
 * The interface promises an answer within 30 s. A request whose answer has not started by `answerTimeoutMs`
 * after it arrived is answered `503 service_unavailable` (retry with backoff; `POST /v2/calls` with the same
 * Idempotency-Key), instead of the connection closing without a word when it goes idle. A response already
 * under way (an event stream, a download) is never cut.
 */
export function registerAnswerDeadline(
  app: FastifyInstance,
  answerTimeoutMs: number,
  shape: ErrorShape = envelopeShape,
): void {
  app.addHook('onRequest', (request, reply, done) => {
    const timer = setTimeout(() => {
      if (reply.sent || reply.raw.headersSent) return;
      request.log.warn({ route: request.routeOptions.url, answerTimeoutMs }, 'no answer by the deadline');
      reply.header('connection', 'close');
      sendApiError(
        reply,
        new ApiError(
          'service_unavailable',
          `no answer within ${answerTimeoutMs} ms; retry with backoff (POST /v2/calls with the same Idempotency-Key)`,
          { retryAfterSecs: 1 },
        ),
        shape,
      );
    }, answerTimeoutMs);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
}

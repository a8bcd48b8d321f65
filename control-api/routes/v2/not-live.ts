import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../core/errors.ts';
import type { RouteRegistry } from '../../http/route.ts';

/**
 * Route groups of the interface that this deployment does not serve yet. They answer `501 not_implemented` in
 * the error envelope (after authentication, like every v2 route) instead of a bare 404, and the OpenAPI
 * document lists them with that answer.
 */
const NOT_LIVE: ReadonlyArray<{ prefix: string; what: string }> = [];

export function registerNotLiveRoutes(app: FastifyInstance, registry: RouteRegistry): void {
  for (const { prefix, what } of NOT_LIVE) {
    const handler = async () => {
      throw new ApiError(
        'not_implemented',
        `${what} ${what.endsWith('s') ? 'are' : 'is'} not live on this deployment yet`,
      );
    };
    for (const url of [prefix, `${prefix}/*`]) {
      app.route({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        url,
        config: { authenticated: true },
        handler,
      });
    }
    registry.routes.push({
      method: 'POST',
      url: `${app.prefix}${prefix}/*`,
      operationId: `notLive${`${app.prefix}${prefix}`.replace(/[^a-z]+(.)?/gi, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: `Every method under ${app.prefix}${prefix}: ${what}, not live yet (501 not_implemented)`,
      tag: 'Not live yet',
      auth: true,
      bodyOptional: true,
      responses: {},
      errors: ['not_implemented'],
    });
  }
}

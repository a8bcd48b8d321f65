import type { FastifyInstance } from 'fastify';
import type { Coordinator } from '../../core/coord/types.ts';
import { ApiError } from '../../core/errors.ts';

/** Per-key request rate (token bucket in the coordinator, so every API node shares one budget per key). */
export function registerRateLimit(
  app: FastifyInstance,
  coord: Coordinator,
  limits: { ratePerSec: number; burst: number },
): void {
  app.addHook('preHandler', async (request, reply) => {
    const auth = request.auth;
    if (!auth) return;
    const result = await coord.rateLimit(`api:key:${auth.keyId}`, limits.ratePerSec, limits.burst);
    if (result.allowed) {
      reply.header('x-ratelimit-remaining', String(result.remaining));
      return;
    }
    const retryAfterSecs = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
    throw new ApiError(
      'rate_limited',
      `request rate limit exceeded (${limits.ratePerSec}/s, burst ${limits.burst} per key); retry after ${retryAfterSecs}s`,
      { retryAfterSecs },
    );
  });
}

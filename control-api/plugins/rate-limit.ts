import type { FastifyInstance } from 'fastify';
import { MemoryCoordinator } from '../../core/coord/memory.ts';
import type { Coordinator, RateLimitResult } from '../../core/coord/types.ts';
import { isCoordinatorUnavailable } from '../../core/coord/unavailable.ts';
import { ApiError } from '../../core/errors.ts';

/**
 * Per-key request rate (token bucket in the coordinator, so every API node shares one budget per key). While
 * Redis is away, each API node keeps the same budget per key in its own memory instead: the API goes on
 * answering (reads come from the database, new calls wait queued), and a client spreading its requests over N
 * nodes gets at most N times its rate until Redis is back.
 */
export function keyRateLimiter(
  coord: Coordinator,
  limits: { ratePerSec: number; burst: number },
): (key: string) => Promise<RateLimitResult> {
  const local = new MemoryCoordinator();
  return async (key) => {
    try {
      return await coord.rateLimit(key, limits.ratePerSec, limits.burst);
    } catch (error) {
      if (!isCoordinatorUnavailable(error)) throw error;
      return local.rateLimit(key, limits.ratePerSec, limits.burst);
    }
  };
}

/** The v2 product's per-key limit (see `keyRateLimiter`), answering `429 rate_limited` in the v2 envelope. */
export function registerRateLimit(
  app: FastifyInstance,
  coord: Coordinator,
  limits: { ratePerSec: number; burst: number },
): void {
  const take = keyRateLimiter(coord, limits);
  app.addHook('preHandler', async (request, reply) => {
    const auth = request.auth;
    if (!auth) return;
    const result = await take(`api:key:${auth.keyId}`);
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

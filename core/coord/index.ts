import type { Clock } from '../clock.ts';
import type { ReportError } from './channel-handlers.ts';
import { MemoryCoordinator } from './memory.ts';
import { RedisCoordinator, type ReportConnection } from './redis.ts';
import type { Coordinator } from './types.ts';

export type { MessageHandler, ReportError } from './channel-handlers.ts';
export { MemoryCoordinator, type MemoryCoordinatorOptions } from './memory.ts';
export {
  type ConnectionChange,
  DEFAULT_KEY_PREFIX,
  RedisCoordinator,
  type RedisCoordinatorOptions,
  type ReportConnection,
} from './redis.ts';
export type { Coordinator, Counters, Lock, RateLimitResult, Slots, Unsubscribe } from './types.ts';

export interface CoordinatorOptions {
  /** Redis for a deployment of many processes; without it, the in-process coordinator. */
  redisUrl?: string;
  clock?: Clock;
  /** Namespace of Redis keys and channels (ignored in memory). */
  keyPrefix?: string;
  /** Receives subscribers' handler errors; defaults to a process warning. */
  reportError?: ReportError;
  /** Hears when the connection to Redis is lost and when it is back (ignored in memory). */
  reportConnection?: ReportConnection;
}

export function createCoordinator(options: CoordinatorOptions = {}): Coordinator {
  const { redisUrl, clock, keyPrefix, reportError, reportConnection } = options;
  if (redisUrl)
    return new RedisCoordinator({ url: redisUrl, clock, keyPrefix, reportError, reportConnection });
  return new MemoryCoordinator({ clock, reportError });
}

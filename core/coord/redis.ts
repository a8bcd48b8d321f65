import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { type Clock, systemClock } from '../clock.ts';
import { requireCandidates, requireCeiling, requireDurationMs, windowStart } from './arguments.ts';
import { ChannelHandlers, type MessageHandler, type ReportError, warnOnError } from './channel-handlers.ts';
import {
  acquireSlot,
  extendLock,
  giveBackOne,
  holdSlot,
  incrementCount,
  releaseLock,
  renewSlot,
  stateEpoch,
  takeLeast,
  takeLock,
  takeToken,
} from './redis-scripts.ts';
import { bucketShape, TOKEN_UNITS } from './token-bucket.ts';
import type {
  Coordinator,
  Counters,
  Lock,
  RateLimitResult,
  Slots,
  Tallies,
  TallyCandidate,
  TallyTaken,
  Unsubscribe,
} from './types.ts';
import { CoordinatorUnavailableError, isCoordinatorUnavailable } from './unavailable.ts';

/*
 * Key layout (every key and channel starts with `{prefix}:`; the default prefix is `voiceagent`):
 *   {prefix}:rate:{key}                             hash {units, at}: a token bucket (see token-bucket.ts)
 *   {prefix}:slots:{scope}                          sorted set: holder id -> lease deadline (ms)
 *   {prefix}:count:{key}:{windowMs}:{windowStart}   string: the count of one fixed window
 *   {prefix}:tally:{key}:{windowMs}:{windowStart}   hash: member -> its count in one fixed window
 *   {prefix}:lock:{key}                             hash {owner, deadline}: owner is a random token per lock
 *   {prefix}:chan:{channel}                         pub/sub channel
 *   {prefix}:state:since                            string: when this data set began (see stateSince)
 */
export const DEFAULT_KEY_PREFIX = 'voiceagent';

/**
 * How long past its logical deadline Redis keeps a key. Redis expires keys on its own clock, which is not the
 * injected one (a test's manual clock, another host's skew); the scripts decide by the clock argument, and the
 * TTL only reclaims memory, so a minute of slack keeps a key alive for as long as any clock may still need it.
 */
const KEY_GRACE_MS = 60_000;

/** Redis answers PING in well under a millisecond; a second of silence means down or unreachable. */
const PING_TIMEOUT_MS = 1_000;

/** A change of the coordinator's connections to Redis: reported once per outage, and once when it ends. */
export type ConnectionChange = { state: 'lost'; error?: unknown } | { state: 'restored'; downMs: number };
export type ReportConnection = (change: ConnectionChange) => void;

/** Without a logger: one process warning per outage and one on recovery. */
export const warnOnConnectionChange: ReportConnection = (change) => {
  const message =
    change.state === 'lost'
      ? `coordinator: lost the connection to Redis${change.error instanceof Error ? `: ${change.error.message}` : ''}`
      : `coordinator: connection to Redis restored after ${change.downMs} ms`;
  process.emitWarning(message, { type: 'CoordinatorWarning' });
};

export interface RedisCoordinatorOptions {
  url: string;
  clock?: Clock;
  /** Namespace of every key and channel, so deployments (and test runs) can share one Redis. */
  keyPrefix?: string;
  /** Receives subscribers' handler errors; defaults to a process warning. */
  reportError?: ReportError;
  /** Hears when the connection to Redis is lost and when it is back; defaults to process warnings. */
  reportConnection?: ReportConnection;
  pingTimeoutMs?: number;
}

/** The coordinator of many processes: state in Redis, every read-modify-write one Lua script. */
export class RedisCoordinator implements Coordinator {
  readonly kind = 'redis' as const;
  readonly slots: Slots;
  readonly counters: Counters;
  readonly tallies: Tallies;
  private readonly redis: Redis;
  /** The connection in subscriber mode, opened on the first subscribe. */
  private subscriber: Redis | undefined;
  private readonly clock: Clock;
  private readonly prefix: string;
  private readonly reportError: ReportError;
  private readonly pingTimeoutMs: number;
  private readonly handlers: ChannelHandlers;
  /** The SUBSCRIBE reply of each channel with handlers, awaited by every subscribe to that channel. */
  private readonly subscribed = new Map<string, Promise<unknown>>();
  private closed = false;
  private readonly reportConnection: ReportConnection;
  /** Connections (by role) that are down; the outage lasts until every one is ready again. */
  private readonly down = new Set<string>();
  private downSince: number | undefined;
  /** Set on the first ready connection: from then on, a command while Redis is away fails at once. */
  private everReady = false;

  constructor(options: RedisCoordinatorOptions) {
    this.clock = options.clock ?? systemClock;
    this.prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.reportError = options.reportError ?? warnOnError;
    this.pingTimeoutMs = options.pingTimeoutMs ?? PING_TIMEOUT_MS;
    this.reportConnection = options.reportConnection ?? warnOnConnectionChange;
    this.handlers = new ChannelHandlers(this.reportError);
    // Once connected, a command never waits in the client's queue for Redis to come back: it fails at once
    // (CoordinatorUnavailableError), and each caller degrades as README "When Redis or PostgreSQL is down" says.
    // Before the first connection, commands wait for it as ever (a node starting next to a starting Redis).
    this.redis = new Redis(options.url, {
      connectionName: this.connectionName('coord'),
      maxRetriesPerRequest: 1,
    });
    this.redis.once('ready', () => {
      this.everReady = true;
    });
    this.watchConnection(this.redis, 'coord');
    this.slots = {
      acquire: (scope, ceiling, holderId, leaseMs) =>
        this.command(() => this.acquireSlot(scope, ceiling, holderId, leaseMs)),
      renew: (scope, holderId, leaseMs) => this.command(() => this.renewSlot(scope, holderId, leaseMs)),
      hold: (scope, holderId, leaseMs) =>
        this.command(async () => {
          requireDurationMs('leaseMs', leaseMs);
          const now = this.clock.now();
          await holdSlot.run(
            this.redis,
            [this.key('slots', scope)],
            [now, holderId, now + leaseMs, KEY_GRACE_MS],
          );
        }),
      release: (scope, holderId) =>
        this.command(async () => {
          await this.redis.zrem(this.key('slots', scope), holderId);
        }),
      holders: (scope) =>
        this.command(async () => {
          const key = this.key('slots', scope);
          const live = await this.redis.zrangebyscore(key, `(${this.clock.now()}`, '+inf');
          return live.sort();
        }),
    };
    this.counters = {
      incr: (key, windowMs) => this.command(() => this.addToCount(key, windowMs)),
      get: (key, windowMs) =>
        this.command(async () => {
          const count = await this.redis.get(this.countKey(key, windowMs, this.clock.now()));
          return count === null ? 0 : Number(count);
        }),
    };
    this.tallies = {
      take: (key, windowMs, candidates) => this.command(() => this.takeLeast(key, windowMs, candidates)),
      giveBack: (key, windowMs, start, member) =>
        this.command(async () => {
          await giveBackOne.run(this.redis, [this.tallyKey(key, windowMs, start)], [member]);
        }),
      read: (key, windowMs, members) =>
        this.command(async () => {
          if (members.length === 0) return [];
          const start = windowStart(this.clock.now(), windowMs);
          const counts = await this.redis.hmget(this.tallyKey(key, windowMs, start), ...members);
          return counts.map((c) => (c === null ? 0 : Number(c)));
        }),
    };
  }

  async rateLimit(key: string, ratePerSec: number, burst: number): Promise<RateLimitResult> {
    const shape = bucketShape(ratePerSec, burst);
    const reply = await this.command(() =>
      takeToken.run(
        this.redis,
        [this.key('rate', key)],
        [this.clock.now(), shape.capacity, shape.refillPerMs, TOKEN_UNITS, KEY_GRACE_MS],
      ),
    );
    const [allowed, detail] = integerPair(reply);
    return allowed === 1 ? { allowed: true, remaining: detail } : { allowed: false, retryAfterMs: detail };
  }

  async lock(key: string, ttlMs: number): Promise<Lock | null> {
    requireDurationMs('ttlMs', ttlMs);
    const lockKey = this.key('lock', key);
    const owner = randomUUID();
    const now = this.clock.now();
    const taken = await this.command(() =>
      takeLock.run(this.redis, [lockKey], [now, owner, now + ttlMs, KEY_GRACE_MS]),
    );
    if (taken !== 1) return null;
    return {
      key,
      extend: async (extendMs) => {
        requireDurationMs('ttlMs', extendMs);
        const at = this.clock.now();
        const args = [at, owner, at + extendMs, KEY_GRACE_MS];
        return (await this.command(() => extendLock.run(this.redis, [lockKey], args))) === 1;
      },
      release: async () => {
        await this.command(() => releaseLock.run(this.redis, [lockKey], [owner]));
      },
    };
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.command(() => this.redis.publish(this.key('chan', channel), message));
  }

  async subscribe(channel: string, handler: MessageHandler): Promise<Unsubscribe> {
    if (this.closed) throw new Error('the coordinator is closed');
    this.requireConnection();
    const redisChannel = this.key('chan', channel);
    const { subscription, first } = this.handlers.add(redisChannel, handler);
    if (first) this.subscribed.set(redisChannel, this.subscriberConnection().subscribe(redisChannel));
    const unsubscribe: Unsubscribe = async () => {
      if (!this.handlers.remove(redisChannel, subscription)) return;
      this.subscribed.delete(redisChannel);
      if (!this.closed) await this.subscriberConnection().unsubscribe(redisChannel);
    };
    try {
      await this.subscribed.get(redisChannel);
    } catch (error) {
      await unsubscribe().catch(() => undefined);
      throw error;
    }
    return unsubscribe;
  }

  async stateSince(): Promise<number> {
    const key = this.key('state', 'since');
    return integer(await this.command(() => stateEpoch.run(this.redis, [key], [this.clock.now()])));
  }

  /** False, never an error, when Redis does not answer within the ping timeout. */
  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const silence = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.pingTimeoutMs);
    });
    const answer = this.redis.ping().then(
      (reply) => reply === 'PONG',
      () => false,
    );
    try {
      return await Promise.race([answer, silence]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    this.subscribed.clear();
    await Promise.all([quit(this.redis), this.subscriber ? quit(this.subscriber) : undefined]);
  }

  /**
   * Runs one command, failing at once with CoordinatorUnavailableError while Redis is away (after the first
   * connection), and turning the client's own give-ups (a connection lost under the command, no answer in time)
   * into the same error.
   */
  private async command<T>(run: () => Promise<T>): Promise<T> {
    this.requireConnection();
    try {
      return await run();
    } catch (error) {
      if (isCoordinatorUnavailable(error)) throw new CoordinatorUnavailableError(undefined, { cause: error });
      throw error;
    }
  }

  private requireConnection(): void {
    if (this.everReady && this.redis.status !== 'ready' && !this.closed) {
      throw new CoordinatorUnavailableError();
    }
  }

  private async acquireSlot(
    scope: string,
    ceiling: number,
    holderId: string,
    leaseMs: number,
  ): Promise<boolean> {
    requireCeiling(ceiling);
    requireDurationMs('leaseMs', leaseMs);
    const now = this.clock.now();
    const args = [now, ceiling, holderId, now + leaseMs, KEY_GRACE_MS];
    return (await acquireSlot.run(this.redis, [this.key('slots', scope)], args)) === 1;
  }

  private async renewSlot(scope: string, holderId: string, leaseMs: number): Promise<boolean> {
    requireDurationMs('leaseMs', leaseMs);
    const now = this.clock.now();
    const args = [now, holderId, now + leaseMs, KEY_GRACE_MS];
    return (await renewSlot.run(this.redis, [this.key('slots', scope)], args)) === 1;
  }

  private async addToCount(key: string, windowMs: number): Promise<number> {
    const now = this.clock.now();
    const ttlMs = windowStart(now, windowMs) + windowMs - now + KEY_GRACE_MS;
    return integer(await incrementCount.run(this.redis, [this.countKey(key, windowMs, now)], [ttlMs]));
  }

  private async takeLeast(
    key: string,
    windowMs: number,
    candidates: readonly TallyCandidate[],
  ): Promise<TallyTaken | null> {
    requireCandidates(candidates);
    if (candidates.length === 0) return null;
    const now = this.clock.now();
    const start = windowStart(now, windowMs);
    const ttlMs = start + windowMs - now + KEY_GRACE_MS;
    const args = [ttlMs, ...candidates.flatMap((c) => [c.member, c.limit])];
    const reply = await takeLeast.run(this.redis, [this.tallyKey(key, windowMs, start)], args);
    if (reply === null) return null;
    if (!Array.isArray(reply) || reply.length !== 2 || typeof reply[0] !== 'string') {
      throw unexpectedReply(reply);
    }
    return { member: reply[0], count: integer(reply[1]), windowStart: start };
  }

  private tallyKey(key: string, windowMs: number, start: number): string {
    return this.key('tally', `${key}:${windowMs}:${start}`);
  }

  private countKey(key: string, windowMs: number, now: number): string {
    return this.key('count', `${key}:${windowMs}:${windowStart(now, windowMs)}`);
  }

  private key(kind: 'rate' | 'slots' | 'count' | 'tally' | 'lock' | 'chan' | 'state', name: string): string {
    return `${this.prefix}:${kind}:${name}`;
  }

  /**
   * Reports an outage once, however many connections drop and however often the client retries, and its end
   * once every dropped connection is ready again (the client reconnects and resubscribes by itself).
   */
  private watchConnection(client: Redis, role: string): void {
    const lost = (error?: unknown) => {
      if (this.closed) return;
      this.down.add(role);
      if (this.downSince !== undefined) return;
      this.downSince = Date.now();
      this.reportConnection(error === undefined ? { state: 'lost' } : { state: 'lost', error });
    };
    client.on('error', (error: unknown) => lost(error));
    client.on('close', () => lost());
    client.on('ready', () => {
      if (!this.down.delete(role) || this.down.size > 0 || this.downSince === undefined) return;
      const downMs = Date.now() - this.downSince;
      this.downSince = undefined;
      this.reportConnection({ state: 'restored', downMs });
    });
  }

  /** Names a connection so `CLIENT LIST` shows whose it is; CLIENT SETNAME refuses spaces. */
  private connectionName(role: string): string {
    return `${this.prefix}:${role}`.replace(/[^\w:.-]/g, '_');
  }

  private subscriberConnection(): Redis {
    if (!this.subscriber) {
      const subscriber = this.redis.duplicate({ connectionName: this.connectionName('coord-subscriber') });
      this.watchConnection(subscriber, 'coord-subscriber');
      subscriber.on('message', (channel: string, message: string) => this.handlers.deliver(channel, message));
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}

/** Quits politely when connected; otherwise (connecting, retrying a down server) just drops the connection. */
async function quit(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // fall through: the connection broke while quitting
    }
  }
  client.disconnect();
}

/** A script's reply of one integer, checked. */
function integer(reply: unknown): number {
  if (typeof reply !== 'number') throw unexpectedReply(reply);
  return reply;
}

/** A script's reply of two integers, checked. */
function integerPair(reply: unknown): [number, number] {
  if (!Array.isArray(reply) || reply.length !== 2) throw unexpectedReply(reply);
  return [integer(reply[0]), integer(reply[1])];
}

function unexpectedReply(reply: unknown): Error {
  return new Error(`unexpected reply from a coordinator script: ${JSON.stringify(reply)}`);
}

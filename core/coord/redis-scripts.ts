import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The Lua scripts of the Redis coordinator: every read-modify-write runs as one script, so it is atomic across
 * processes. Each script touches one key (safe on Redis Cluster too). Times come in as arguments from the
 * injected clock, never from Redis's own TIME, so coordinators sharing a clock agree to the millisecond.
 *
 * Redis also expires each key on its own clock, but only to reclaim memory: the scripts compare deadlines
 * against the `now` argument, and every key's TTL outlives its logical deadline by the grace argument.
 */

/** A script run by its SHA-1 (EVALSHA), loaded on first use or after a Redis restart (EVAL). */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

/** Redis names the error of a reply by its first word; NOSCRIPT means the server has not cached the script. */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Token bucket, mirroring `token-bucket.ts` (refill, then take one token).
 * KEYS[1]: hash {units, at}. ARGV: now, capacity, refillPerMs, tokenUnits, graceMs.
 * Returns {1, remaining tokens} or {0, retry-after ms}.
 */
export const takeToken = new LuaScript(`
local now = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local refillPerMs = tonumber(ARGV[3])
local token = tonumber(ARGV[4])
local units, at = capacity, now
local stored = redis.call('HMGET', KEYS[1], 'units', 'at')
if stored[1] then
  units = tonumber(stored[1])
  at = tonumber(stored[2])
  local elapsed = now - at
  if elapsed > 0 then
    if elapsed * refillPerMs >= capacity - units then units = capacity else units = units + elapsed * refillPerMs end
    at = now
  end
end
local verdict
if units >= token then
  units = units - token
  verdict = {1, math.floor(units / token)}
else
  verdict = {0, math.ceil((token - units) / refillPerMs)}
end
redis.call('HSET', KEYS[1], 'units', string.format('%.0f', units), 'at', string.format('%.0f', at))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - units) / refillPerMs) + tonumber(ARGV[5]))
return verdict
`);

/** Drops the expired leases (deadline reached) of the sorted set KEYS[1]; ARGV[1] is now. */
const DROP_EXPIRED_LEASES = `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])`;

/** Keeps the sorted set KEYS[1] until its last lease ends plus the grace; `graceArg` is its ARGV index. */
const keepUntilLastLease = (graceArg: number) => `
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], tonumber(last[2]) - tonumber(ARGV[1]) + tonumber(ARGV[${graceArg}]))`;

/**
 * Take (or renew) a slot. KEYS[1]: sorted set of holder ids scored by lease deadline (ms).
 * ARGV: now, ceiling, holderId, deadline, graceMs. Returns 1 when held, 0 when every slot is taken.
 */
export const acquireSlot = new LuaScript(`
${DROP_EXPIRED_LEASES}
if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
${keepUntilLastLease(5)}
return 1
`);

/**
 * Extend a live lease. KEYS[1]: as acquireSlot. ARGV: now, holderId, deadline, graceMs.
 * Returns 1 when extended, 0 when the holder has no live lease.
 */
export const renewSlot = new LuaScript(`
${DROP_EXPIRED_LEASES}
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[2])
${keepUntilLastLease(4)}
return 1
`);

/**
 * Take or renew a slot whatever the ceiling (a live holder re-asserting it). KEYS[1]: as acquireSlot.
 * ARGV: now, holderId, deadline, graceMs.
 */
export const holdSlot = new LuaScript(`
${DROP_EXPIRED_LEASES}
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
${keepUntilLastLease(4)}
return 1
`);

/**
 * When the shared state began: the time in KEYS[1], written with ARGV[1] (now) by the first to ask after Redis
 * came up empty. It has no TTL: only a loss of the data set removes it (or eviction, which only makes the state
 * look younger, the safe side).
 */
export const stateEpoch = new LuaScript(`
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return tonumber(redis.call('GET', KEYS[1]))
`);

/** Count one in a fixed window. KEYS[1]: the window's counter. ARGV: ttlMs. Returns the count. */
export const incrementCount = new LuaScript(`
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return count
`);

/**
 * Take a free or expired lock. KEYS[1]: hash {owner, deadline}. ARGV: now, owner, deadline, graceMs.
 * Returns 1 when taken, 0 when another owner's lock is live.
 */
export const takeLock = new LuaScript(`
local held = redis.call('HMGET', KEYS[1], 'owner', 'deadline')
if held[1] and tonumber(held[2]) > tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'deadline', ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) - tonumber(ARGV[1]) + tonumber(ARGV[4]))
return 1
`);

/**
 * Extend a lock its owner still holds live. KEYS[1]: as takeLock. ARGV: now, owner, deadline, graceMs.
 * Returns 1 when extended, 0 when it expired or belongs to another owner.
 */
export const extendLock = new LuaScript(`
local held = redis.call('HMGET', KEYS[1], 'owner', 'deadline')
if held[1] ~= ARGV[2] or tonumber(held[2]) <= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'deadline', ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) - tonumber(ARGV[1]) + tonumber(ARGV[4]))
return 1
`);

/** Compare-and-delete: remove the lock only if ARGV[1] still owns it. KEYS[1]: as takeLock. */
export const releaseLock = new LuaScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);

/**
 * Count one for the least-counted member under its limit. KEYS[1]: hash member -> count of one window.
 * ARGV: ttlMs, then member, limit pairs in order of preference (ties go to the earlier).
 * Returns {member, count} or false when every member is at its limit.
 */
export const takeLeast = new LuaScript(`
local best, bestCount = nil, nil
for i = 2, #ARGV, 2 do
  local member = ARGV[i]
  local count = tonumber(redis.call('HGET', KEYS[1], member) or '0')
  if count < tonumber(ARGV[i + 1]) and (best == nil or count < bestCount) then
    best, bestCount = member, count
  end
end
if best == nil then return false end
local count = redis.call('HINCRBY', KEYS[1], best, 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {best, count}
`);

/** Take back one count. KEYS[1]: as takeLeast. ARGV: member. Never below zero. */
export const giveBackOne = new LuaScript(`
local count = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if count > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1], -1) end
return 1
`);

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock, systemClock } from '../clock.ts';

/** What a token may be used on: a carrier's media route (`twilio`, `exotel`, ...) or `web` (browser calls). */
export type StreamKind = string;

/**
 * Stream tokens: every media URL (or the carrier's custom parameters) carries one. A token is
 *
 *   vst1.<base64url(JSON {i, c, k, e})>.<base64url(HMAC-SHA256(key, "vst1." + payload))>
 *
 * with `i` a random token id, `c` the call id it is bound to, `k` the carrier (or `web`) it may be used on
 * and `e` its expiry in epoch milliseconds. The key is derived from the deployment secret for this purpose
 * only. A token is good once: the first successful verify claims its id through `TokenClaims` (the platform's
 * coordinator lock backs it, so the claim holds across gateway processes) until it would have expired anyway.
 *
 * The token text is a credential: nothing here logs it, and verify results never contain it.
 */

const VERSION = 'vst1';
const KEY_LABEL = 'voiceagent stream token v1';
/** Longest lifetime a caller may ask for; a media stream connects within seconds of the call being answered. */
export const MAX_TOKEN_TTL_MS = 10 * 60_000;
/** Tolerated clock difference between the minting API node and the verifying gateway node. */
const CLOCK_SKEW_MS = 5_000;
/** Tokens longer than this are refused before any parsing (they cannot be ours). */
const MAX_TOKEN_LENGTH = 1024;

export type TokenRejection =
  | 'missing'
  | 'malformed'
  | 'bad_signature'
  | 'wrong_carrier'
  | 'expired'
  | 'wrong_call'
  | 'reused'
  | 'check_failed';

export type TokenVerdict =
  | { readonly ok: true; readonly callId: string; readonly tokenId: string; readonly expiresAt: number }
  | {
      readonly ok: false;
      readonly reason: TokenRejection;
      /**
       * The call a genuine token was minted for, when it was refused only for its time (`expired`, `reused`):
       * its holder had the link, so it may be told how that call went.
       */
      readonly callId?: string;
    };

/** One-time use tracking. `claim` answers true for the first claim of an id within `ttlMs`, false afterwards. */
export interface TokenClaims {
  claim(tokenId: string, ttlMs: number): Promise<boolean>;
}

/** In-process claims, for tests and single-process deployments. Expired entries are swept on use. */
export class MemoryTokenClaims implements TokenClaims {
  private readonly claimed = new Map<string, number>();
  constructor(private readonly clock: Clock = systemClock) {}

  async claim(tokenId: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now();
    if (this.claimed.size > 1024) this.sweep(now);
    const until = this.claimed.get(tokenId);
    if (until !== undefined && until > now) return false;
    this.claimed.set(tokenId, now + Math.max(1, ttlMs));
    return true;
  }

  private sweep(now: number): void {
    for (const [id, until] of this.claimed) if (until <= now) this.claimed.delete(id);
  }
}

export interface StreamTokensOptions {
  /** The deployment secret (config `secretKey`); at least 32 characters. */
  readonly secret: string;
  readonly claims: TokenClaims;
  readonly clock?: Clock;
}

interface TokenPayload {
  i: string;
  c: string;
  k: string;
  e: number;
}

export class StreamTokens {
  private readonly key: Buffer;
  private readonly claims: TokenClaims;
  private readonly clock: Clock;

  constructor(options: StreamTokensOptions) {
    if (options.secret.length < 32) throw new Error('stream tokens need a secret of at least 32 characters');
    this.key = createHmac('sha256', options.secret).update(KEY_LABEL).digest();
    this.claims = options.claims;
    this.clock = options.clock ?? systemClock;
  }

  /** A token for one media stream of `callId` on `carrier`, good once within `ttlMs`. */
  mint(callId: string, carrier: StreamKind, ttlMs: number): string {
    if (!callId) throw new Error('mint: callId is required');
    if (!(ttlMs > 0 && ttlMs <= MAX_TOKEN_TTL_MS))
      throw new Error(`mint: ttlMs must be in (0, ${MAX_TOKEN_TTL_MS}]`);
    const payload: TokenPayload = {
      i: randomBytes(16).toString('base64url'),
      c: callId,
      k: carrier,
      e: this.clock.now() + Math.round(ttlMs),
    };
    const body = `${VERSION}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${body}.${this.sign(body).toString('base64url')}`;
  }

  /**
   * Checks, in this order: shape, signature, carrier, expiry, call binding (when the stream names its call),
   * and finally claims the token id so a second use answers `reused`. A token that fails an earlier check is
   * not claimed.
   */
  async verify(
    token: string | undefined,
    expectedCarrier: StreamKind,
    expectedCallId?: string,
  ): Promise<TokenVerdict> {
    if (token === undefined || token === '') return { ok: false, reason: 'missing' };
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'malformed' };
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== VERSION) return { ok: false, reason: 'malformed' };
    const [version, encodedPayload, encodedSignature] = parts as [string, string, string];
    const payload = decodePayload(encodedPayload);
    if (!payload) return { ok: false, reason: 'malformed' };
    const given = Buffer.from(encodedSignature, 'base64url');
    const expected = this.sign(`${version}.${encodedPayload}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { ok: false, reason: 'bad_signature' };
    }
    if (payload.k !== expectedCarrier) return { ok: false, reason: 'wrong_carrier' };
    const now = this.clock.now();
    if (payload.e + CLOCK_SKEW_MS <= now) return { ok: false, reason: 'expired', callId: payload.c };
    if (expectedCallId !== undefined && expectedCallId !== payload.c)
      return { ok: false, reason: 'wrong_call' };
    let first: boolean;
    try {
      first = await this.claims.claim(payload.i, payload.e + CLOCK_SKEW_MS - now);
    } catch {
      return { ok: false, reason: 'check_failed' };
    }
    if (!first) return { ok: false, reason: 'reused', callId: payload.c };
    return { ok: true, callId: payload.c, tokenId: payload.i, expiresAt: payload.e };
  }

  private sign(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest();
  }
}

function decodePayload(encoded: string): TokenPayload | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const p = value as Record<string, unknown>;
  if (typeof p.i !== 'string' || typeof p.c !== 'string' || typeof p.k !== 'string') return undefined;
  if (typeof p.e !== 'number' || !Number.isFinite(p.e) || p.i === '' || p.c === '') return undefined;
  return { i: p.i, c: p.c, k: p.k, e: p.e };
}

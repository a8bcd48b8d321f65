import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures (interface "Webhook signing"): `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`
 * where each v1 is HMAC-SHA256, keyed with a webhook secret, over `<t>.<raw body bytes>`. One v1 per valid secret,
 * so receivers keep working through a secret rotation. No spaces: common parsers split on `,` and `=` as is.
 */
export const SIGNATURE_HEADER = 'X-Service-Signature';
/** Receivers reject signatures older or newer than this (interface: 300 seconds). */
export const SIGNATURE_TOLERANCE_SECS = 300;

function hmacHex(secret: string, timestamp: number, body: Uint8Array | string): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.`);
  mac.update(body);
  return mac.digest('hex');
}

export function signatureHeader(
  secrets: readonly string[],
  body: Uint8Array | string,
  timestampSecs: number,
): string {
  if (secrets.length === 0) throw new Error('no webhook secret to sign with');
  return [`t=${timestampSecs}`, ...secrets.map((s) => `v1=${hmacHex(s, timestampSecs, body)}`)].join(',');
}

export type VerifyResult = { ok: true } | { ok: false; reason: 'malformed' | 'expired' | 'mismatch' };

/** What a receiver does: parse, check the window, recompute over the raw bytes, compare in constant time. */
export function verifySignature(
  header: string | undefined,
  body: Uint8Array | string,
  secret: string,
  nowSecs: number,
  toleranceSecs = SIGNATURE_TOLERANCE_SECS,
): VerifyResult {
  if (!header) return { ok: false, reason: 'malformed' };
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key === 't' && value && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) candidates.push(value);
  }
  if (timestamp === undefined || candidates.length === 0) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowSecs - timestamp) > toleranceSecs) return { ok: false, reason: 'expired' };
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
  const match = candidates.some((c) => timingSafeEqual(Buffer.from(c, 'hex'), expected));
  return match ? { ok: true } : { ok: false, reason: 'mismatch' };
}

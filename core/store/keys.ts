import crypto from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** `prefix` + `hexChars` lowercase hex characters of cryptographic randomness. */
export function randomToken(prefix: string, hexChars: number): string {
  return (
    prefix +
    crypto
      .randomBytes(Math.ceil(hexChars / 2))
      .toString('hex')
      .slice(0, hexChars)
  );
}

export function sha256Hex(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && crypto.timingSafeEqual(left, right);
}

const nextUlid = monotonicFactory();

/** A time-ordered id for rows that never leave the store (no public prefix). */
export function rowId(nowMs: number): string {
  return nextUlid(nowMs);
}

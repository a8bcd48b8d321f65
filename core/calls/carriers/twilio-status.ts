import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RingOutcome } from '../carrier.ts';

/**
 * Twilio's call status callbacks, pure (no I/O): the `X-Twilio-Signature` check and what each `CallStatus`
 * means for a call of ours. The route that receives them is `control-api/routes/carriers/twilio.ts`.
 *
 * Signature (Twilio's request validation): base64 HMAC-SHA1, keyed with the account's auth token, of the full
 * URL Twilio requested (query string included) followed by every POST parameter as name then value, names
 * sorted; a name that repeats contributes each distinct value, sorted.
 */

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** Form parameters as a callback carries them; a name may repeat. */
export type CallbackParams = Readonly<Record<string, string | readonly string[]>>;

/** What a status callback means for a call of ours. */
export type StatusVerdict = RingOutcome | 'answered' | 'completed' | 'ignore';

/** Twilio's signature of a request to `url` carrying `params`. */
export function twilioSignature(url: string, params: CallbackParams, authToken: string): string {
  const hmac = createHmac('sha1', authToken);
  hmac.update(url, 'utf8');
  for (const name of Object.keys(params).sort()) {
    const value = params[name] as string | readonly string[];
    const values = typeof value === 'string' ? [value] : [...new Set(value)].sort();
    for (const each of values) hmac.update(name + each, 'utf8');
  }
  return hmac.digest('base64');
}

/**
 * Whether `signatureHeader` is Twilio's signature of this request. Like Twilio's own validators it also
 * accepts the URL with its default port written out or left out, since proxies differ on that.
 */
export function verifyTwilioSignature(
  url: string,
  params: CallbackParams,
  signatureHeader: string | undefined,
  authToken: string,
): boolean {
  if (!signatureHeader || !authToken) return false;
  const given = Buffer.from(signatureHeader, 'utf8');
  let matched = false;
  for (const candidate of urlVariants(url)) {
    const expected = Buffer.from(twilioSignature(candidate, params, authToken), 'utf8');
    // Every variant is compared, so the time taken does not tell which one came close.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

/** `url` as given, plus the same URL with its scheme's default port added or removed. */
function urlVariants(url: string): string[] {
  const match = /^(https?:)\/\/([^/?#]*)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme = '', authority = '', rest = ''] = match;
  const defaultPort = DEFAULT_PORTS[scheme.toLowerCase()] as string;
  const portMatch = /^(.*?)(?::(\d+))?$/.exec(authority);
  const host = portMatch?.[1] ?? authority;
  const port = portMatch?.[2];
  if (port === undefined) return [url, `${scheme}//${host}:${defaultPort}${rest}`];
  if (port === defaultPort) return [url, `${scheme}//${host}${rest}`];
  return [url];
}

/**
 * What a `CallStatus` means for the call:
 * - `busy` -> busy, `no-answer` -> ring_timeout, `failed` -> carrier_failed: the call ended before media;
 * - `in-progress` -> answered (the media stream reaching the gateway is what marks a call answered);
 * - `completed` -> completed (the end of media is the gateway's to handle), except that a call completed with
 *   no talk time (`CallDuration` 0) was never answered: ring_timeout;
 * - `canceled` (we hung it up), `queued`, `initiated`, `ringing` and anything unknown -> ignore.
 */
export function ringOutcomeOf(callStatus: string, details: { callDuration?: string } = {}): StatusVerdict {
  switch (callStatus) {
    case 'busy':
      return 'busy';
    case 'no-answer':
      return 'ring_timeout';
    case 'failed':
      return 'carrier_failed';
    case 'in-progress':
      return 'answered';
    case 'completed':
      return details.callDuration !== undefined && /^\s*0+\s*$/.test(details.callDuration)
        ? 'ring_timeout'
        : 'completed';
    default:
      return 'ignore';
  }
}

/** The single value of `name`, or the first when it repeats. */
export function paramOf(params: CallbackParams, name: string): string | undefined {
  const value = params[name];
  return typeof value === 'string' ? value : value?.[0];
}

/** A failed call's cause for operators: Twilio's error code and the SIP response, when the callback has them. */
export function failureDetailOf(params: CallbackParams): string {
  const causes = [
    ['error', paramOf(params, 'ErrorCode')],
    ['SIP', paramOf(params, 'SipResponseCode')],
  ]
    .filter((cause): cause is [string, string] => typeof cause[1] === 'string' && /^\d{1,6}$/.test(cause[1]))
    .map(([label, code]) => `${label} ${code}`);
  return causes.length > 0
    ? `Twilio reported the call failed (${causes.join(', ')})`
    : 'Twilio reported the call failed';
}

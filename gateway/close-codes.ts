import type { TokenRejection } from './tokens.ts';

/**
 * WebSocket close codes the gateway sends (RFC 6455 leaves 4000-4999 to applications; ours are 4001-4099).
 * The close frame's reason text is the snake_case name below, so a carrier's logs and our tests read the same
 * word. Codes are stable: new ones are appended, none is reused.
 *
 * | code | reason                 | when                                                                        |
 * |------|------------------------|-----------------------------------------------------------------------------|
 * | 1000 | normal                 | the stream ended (stop, bye, handler hung up)                               |
 * | 1001 | going_away             | the gateway is shutting down                                                |
 * | 4001 | token_missing          | no stream token in the URL query, custom parameters or headers              |
 * | 4002 | token_malformed        | the token is not one of ours (shape, encoding)                              |
 * | 4003 | token_bad_signature    | the token's HMAC does not verify                                            |
 * | 4004 | token_expired          | the token's expiry has passed                                               |
 * | 4005 | token_reused           | the token was already used by another stream                                |
 * | 4006 | token_wrong_call       | the token belongs to another call than the one the stream names             |
 * | 4007 | token_wrong_carrier    | the token was minted for another carrier route                              |
 * | 4008 | token_check_failed     | the one-time check could not be made (coordinator unavailable)              |
 * | 4010 | start_timeout          | no start (or hello / connected) message in time                             |
 * | 4011 | too_many_bad_messages  | too many malformed, unknown or out-of-order messages                        |
 * | 4012 | rate_limited           | the stream kept sending faster than real time (flood)                       |
 * | 4013 | unsupported_format     | the negotiated codec or sample rate is one we cannot handle                 |
 * | 4014 | duplicate_start        | a second start on a stream that already started                             |
 * | 4015 | handler_failed         | the call's media handler threw                                              |
 * | 4016 | backpressure           | the peer did not read our audio for too long                                |
 */
export const CLOSE = {
  normal: 1000,
  going_away: 1001,
  token_missing: 4001,
  token_malformed: 4002,
  token_bad_signature: 4003,
  token_expired: 4004,
  token_reused: 4005,
  token_wrong_call: 4006,
  token_wrong_carrier: 4007,
  token_check_failed: 4008,
  start_timeout: 4010,
  too_many_bad_messages: 4011,
  rate_limited: 4012,
  unsupported_format: 4013,
  duplicate_start: 4014,
  handler_failed: 4015,
  backpressure: 4016,
} as const;

export type CloseReason = keyof typeof CLOSE;

export function closeReasonForToken(rejection: TokenRejection): CloseReason {
  return `token_${rejection}`;
}

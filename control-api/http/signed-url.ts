import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a recording link stays valid (interface "Timeouts": recording signed URL, 15 minutes). */
export const RECORDING_LINK_TTL_SECS = 15 * 60;

/** Separates this key from every other use of the deployment secret (stream tokens, ...). */
const PURPOSE = 'voiceagent recording url v1';

const EXPIRES_PATTERN = /^\d{1,12}$/;
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/;

export interface RecordingLink {
  workspaceId: string;
  callId: string;
  /** Unix seconds after which the link no longer works. */
  expires: number;
}

/** What a download request presents; the query values are checked here, as they arrived. */
export interface PresentedRecordingLink {
  workspaceId: string;
  callId: string;
  expires: string;
  signature: string;
}

/**
 * Signed links to a call's recording: `GET /recordings/<workspace>/<call>.wav?expires=&signature=`, where the
 * signature is HMAC-SHA256 over `<workspace>.<call>.<expires>` with a key derived from the deployment secret for
 * this purpose only. Anyone holding the link can download until it expires; nothing else is needed.
 */
export class RecordingLinks {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = createHmac('sha256', secretKey).update(PURPOSE).digest();
  }

  /** Path and query of a link valid for `ttlSecs` from `nowMs`. */
  pathFor(workspaceId: string, callId: string, nowMs: number, ttlSecs = RECORDING_LINK_TTL_SECS): string {
    const expires = Math.floor(nowMs / 1_000) + ttlSecs;
    return recordingPath({ workspaceId, callId, expires }, this.sign({ workspaceId, callId, expires }));
  }

  /** Lowercase hex HMAC of the link. */
  sign(link: RecordingLink): string {
    return createHmac('sha256', this.key)
      .update(`${link.workspaceId}.${link.callId}.${link.expires}`)
      .digest('hex');
  }

  /** True when the signature is ours (compared in constant time) and the link has not expired at `nowMs`. */
  verify(presented: PresentedRecordingLink, nowMs: number): boolean {
    if (!EXPIRES_PATTERN.test(presented.expires) || !SIGNATURE_PATTERN.test(presented.signature))
      return false;
    const expires = Number(presented.expires);
    const expected = Buffer.from(
      this.sign({ workspaceId: presented.workspaceId, callId: presented.callId, expires }),
      'hex',
    );
    const given = Buffer.from(presented.signature, 'hex');
    if (!timingSafeEqual(expected, given)) return false;
    return nowMs < expires * 1_000;
  }
}

export function recordingPath(link: RecordingLink, signature: string): string {
  const query = new URLSearchParams({ expires: String(link.expires), signature });
  return `/recordings/${encodeURIComponent(link.workspaceId)}/${encodeURIComponent(link.callId)}.wav?${query}`;
}

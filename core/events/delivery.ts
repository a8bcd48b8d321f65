import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { AddressPolicyError, assertPublicHost, guardedLookup } from '../net/address-policy.ts';
import { SIGNATURE_HEADER, signatureHeader } from './signing.ts';

/**
 * Default client timeout of one webhook attempt, connect to last response byte (docs/architecture.md, "Money and events":
 * 5 s). Receivers should answer well under a second; a slower one is treated as failed and retried.
 */
export const WEBHOOK_TIMEOUT_MS = 5_000;
/** Most of a receiver's response body read before the connection is dropped; nobody reads it. */
const RESPONSE_BODY_LIMIT_BYTES = 64 * 1_024;
export const WEBHOOK_USER_AGENT = 'voiceagent-webhooks/1';
/** Carries the event id, so receivers can dedupe before parsing the body. */
export const EVENT_ID_HEADER = 'Idempotency-Key';

export interface WebhookSenderOptions {
  timeoutMs?: number;
  /** Let webhooks reach loopback and private addresses (`ALLOW_PRIVATE_WEBHOOKS`). */
  allowPrivate?: boolean;
  /** A CA (PEM) trusted besides the default roots; operators may use NODE_EXTRA_CA_CERTS instead. */
  extraCa?: string;
}

export type DeliveryResult =
  | { ok: true; status: number }
  /** `permanent`: no later attempt can succeed (a URL that is not HTTPS). */
  | { ok: false; status: number | null; error: string; permanent: boolean };

export interface Delivery {
  url: string;
  eventId: string;
  /** The stored envelope text; sent as its UTF-8 bytes, unchanged. */
  body: string;
  /** Every currently valid webhook secret of the workspace; each adds a `v1` to the signature. */
  secrets: readonly string[];
  /** Unix seconds for `t=` of the signature. */
  timestampSecs: number;
  /** Headers of a post_call tool (rendered from its templates); the platform's own headers win. */
  headers?: Record<string, string>;
  /**
   * A legacy v1 webhook: signed v1's way instead (`x-signature`, bare hex over the raw body, and
   * `x-public-key`); `secrets` and `timestampSecs` are not used.
   */
  v1Signature?: { signature: string; publicKey: string };
}

function describeError(error: unknown): string {
  if (error instanceof AddressPolicyError) return `refused: ${error.message}`;
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timeout: no answer in time';
    return code ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * Sends one webhook attempt: an HTTPS POST of the stored body with `Content-Type: application/json`, the
 * signature, a User-Agent and the event id. Only `https:` URLs are called. Internal addresses are refused
 * before connecting (`assertPublicHost`, which also covers IP literals) and again at connect time
 * (`guardedLookup`, so a DNS answer that changes in between cannot slip through) unless `allowPrivate`.
 * Redirects are not followed. Any 2xx is success; everything else is a failure to retry.
 */
export class WebhookSender {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly allowPrivate: boolean;

  constructor(options: WebhookSenderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.allowPrivate = options.allowPrivate ?? false;
    this.agent = new Agent({
      connect: {
        lookup: guardedLookup({ allowPrivate: this.allowPrivate }),
        timeout: this.timeoutMs,
        ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
      },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  async send(delivery: Delivery): Promise<DeliveryResult> {
    let url: URL;
    try {
      url = new URL(delivery.url);
    } catch {
      return { ok: false, status: null, error: 'webhook_url is not a URL', permanent: true };
    }
    if (url.protocol !== 'https:') {
      return { ok: false, status: null, error: 'webhook_url must use https; not called', permanent: true };
    }
    const body = Buffer.from(delivery.body, 'utf8');
    try {
      await assertPublicHost(url.hostname, { allowPrivate: this.allowPrivate });
      const response = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        body,
        headers: {
          ...delivery.headers,
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          [EVENT_ID_HEADER.toLowerCase()]: delivery.eventId,
          ...(delivery.v1Signature
            ? {
                'x-signature': delivery.v1Signature.signature,
                'x-public-key': delivery.v1Signature.publicKey,
              }
            : {
                [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(
                  delivery.secrets,
                  body,
                  delivery.timestampSecs,
                ),
              }),
        },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.body.dump({ limit: RESPONSE_BODY_LIMIT_BYTES }).catch(() => {});
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { ok: true, status };
      return { ok: false, status, error: `HTTP ${status}`, permanent: false };
    } catch (error) {
      return { ok: false, status: null, error: describeError(error), permanent: false };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

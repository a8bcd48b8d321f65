import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { StreamTokens } from '../../../core/auth/stream-tokens.ts';
import type { Carrier } from '../../../core/calls/carrier.ts';
import type { CallRecord } from '../../../core/store/types.ts';

/**
 * The Twilio carrier (docs/architecture.md, "Carriers and engines"): places calls through Twilio's REST API, or any service that
 * speaks its shape. `originate` creates the call with inline TwiML that connects its media to the gateway's
 * `/media/twilio` route, carrying a one-time stream token as a `<Parameter>`, and asks for status callbacks at
 * the API (`<statusCallbackUrl>/<call id>`); busy, no-answer and failed calls are settled from those callbacks.
 *
 * A server error or a lost request is sent once more, with the same form and so the same stream token: should
 * the first attempt have created a call after all, only one of the two can ever connect media.
 *
 * The auth token and the stream tokens are credentials: nothing here logs them, and error messages that
 * Twilio might echo them into are scrubbed.
 */

export const TWILIO_API_BASE = 'https://api.twilio.com';
/** Per request, connect to last byte; Twilio answers in well under a second. */
export const TWILIO_REQUEST_TIMEOUT_MS = 10_000;

const API_VERSION = '2010-04-01';
const MEDIA_ROUTE = '/media/twilio';
/** How long Twilio lets the callee's phone ring before reporting `no-answer`. */
const RING_TIMEOUT_SECS = 60;
/** The stream token must outlive Twilio's dialing queue, the ringing (up to 60 s) and the answer. */
const STREAM_TOKEN_TTL_MS = 5 * 60_000;
/** Pause before the one retry: enough for a dropped connection or a restarting node to pass. */
const RETRY_DELAY_MS = 250;
const STATUS_CALLBACK_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;
/** Twilio's "The requested resource was not found". */
const TWILIO_NOT_FOUND = 20404;
/** Twilio's "Call is not in-progress": the update does not apply to the call's state. */
const TWILIO_INVALID_CALL_STATE = 21220;
/** Call states in which `Status=canceled` is what ends the call. */
const NOT_YET_ANSWERED = new Set(['queued', 'initiated', 'ringing']);
/** Most of an error message kept; Twilio's are one sentence. */
const MAX_MESSAGE_CHARS = 300;

export interface TwilioCarrierOptions {
  /** `TWILIO_API_BASE`; default Twilio's public API. */
  readonly apiBase?: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** Caller id of calls that name none (`TWILIO_FROM_NUMBER`), E.164. */
  readonly fromNumber: string;
  /** `ws://` or `wss://` base of the media gateway (`PUBLIC_GATEWAY_URL`); streams go to `/media/twilio`. */
  readonly mediaUrl: string;
  /** Where Twilio posts status callbacks; each call's id is appended as a path segment. */
  readonly statusCallbackUrl: string;
  /** Mints the one-time token each call's media stream presents. */
  readonly tokens: StreamTokens;
  /** Per request; default 10 s. */
  readonly timeoutMs?: number;
  /** Ask Twilio for answering machine detection (`MachineDetection=Enable`), for voicemail handling. */
  readonly machineDetection?: boolean;
}

/** A request Twilio refused or that never got an answer. */
export class TwilioRequestError extends Error {
  override name = 'TwilioRequestError';

  constructor(
    message: string,
    /** The HTTP status, when Twilio answered. */
    readonly httpStatus: number | undefined,
    /** Twilio's error code (`21211`), when its answer carried one. */
    readonly twilioCode: number | undefined,
    /** A server error or a lost request, which may succeed when sent again. */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

type TwilioObject = Record<string, unknown>;

type StatusUpdate =
  | { readonly kind: 'updated'; readonly callStatus: string | undefined }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'invalid_state' };

export class TwilioCarrier implements Carrier {
  readonly name = 'twilio';
  private readonly accountUrl: string;
  private readonly authorization: string;
  private readonly streamUrl: string;
  private readonly statusCallbackBase: string;
  private readonly timeoutMs: number;
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly options: TwilioCarrierOptions) {
    if (!options.accountSid || !options.authToken)
      throw new Error('twilio carrier: accountSid and authToken are required');
    if (!options.fromNumber) throw new Error('twilio carrier: fromNumber is required');
    const apiBase = withoutTrailingSlash(options.apiBase ?? TWILIO_API_BASE);
    this.accountUrl = `${apiBase}/${API_VERSION}/Accounts/${encodeURIComponent(options.accountSid)}`;
    this.authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
    this.streamUrl = streamUrlOf(options.mediaUrl);
    this.statusCallbackBase = withoutTrailingSlash(options.statusCallbackUrl);
    this.timeoutMs = options.timeoutMs ?? TWILIO_REQUEST_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError('twilio carrier: timeoutMs must be > 0');
  }

  async originate(call: CallRecord): Promise<{ carrierCallId: string }> {
    if (this.closed) throw new Error('twilio carrier: closed');
    if (!call.toNumber) throw new Error('twilio carrier: the call has no destination number');
    const token = this.options.tokens.mint(call.id, 'twilio', STREAM_TOKEN_TTL_MS);
    const created = await this.post('/Calls.json', this.callForm(call, token), [token]);
    const sid = created['sid'];
    if (typeof sid !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(sid)) {
      throw new TwilioRequestError(
        'Twilio accepted the call but answered no call sid',
        undefined,
        undefined,
        false,
      );
    }
    return { carrierCallId: sid };
  }

  /**
   * `Status=completed` ends a call in progress; when Twilio says the call is not in progress (still queued or
   * ringing), `Status=canceled` stops it. A call Twilio does not know or that already ended is no error.
   */
  async hangup(carrierCallId: string): Promise<void> {
    const completed = await this.updateStatus(carrierCallId, 'completed');
    if (completed.kind === 'not_found') return;
    const ringing =
      completed.kind === 'invalid_state' ||
      (completed.callStatus !== undefined && NOT_YET_ANSWERED.has(completed.callStatus));
    if (ringing) await this.updateStatus(carrierCallId, 'canceled');
  }

  /** Refuses new calls and waits for the requests under way (each bounded by the timeout). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
  }

  private callForm(call: CallRecord, token: string): URLSearchParams {
    const form = new URLSearchParams();
    form.set('To', call.toNumber ?? '');
    form.set('From', call.fromNumber ?? this.options.fromNumber);
    form.set('Twiml', streamTwiml(this.streamUrl, token));
    form.set('StatusCallback', `${this.statusCallbackBase}/${encodeURIComponent(call.id)}`);
    form.set('StatusCallbackMethod', 'POST');
    for (const event of STATUS_CALLBACK_EVENTS) form.append('StatusCallbackEvent', event);
    form.set('Timeout', String(RING_TIMEOUT_SECS));
    if (this.options.machineDetection) form.set('MachineDetection', 'Enable');
    return form;
  }

  private async updateStatus(sid: string, status: 'completed' | 'canceled'): Promise<StatusUpdate> {
    try {
      const call = await this.post(
        `/Calls/${encodeURIComponent(sid)}.json`,
        new URLSearchParams({ Status: status }),
      );
      const callStatus = call['status'];
      return { kind: 'updated', callStatus: typeof callStatus === 'string' ? callStatus : undefined };
    } catch (error) {
      if (error instanceof TwilioRequestError) {
        if (error.httpStatus === 404 || error.twilioCode === TWILIO_NOT_FOUND) return { kind: 'not_found' };
        if (error.twilioCode === TWILIO_INVALID_CALL_STATE) return { kind: 'invalid_state' };
      }
      throw error;
    }
  }

  /** POSTs `form` under the account, once more after a server error or a lost request. */
  private post(path: string, form: URLSearchParams, secrets: readonly string[] = []): Promise<TwilioObject> {
    return this.tracked(this.postWithRetry(path, form, secrets));
  }

  private async postWithRetry(
    path: string,
    form: URLSearchParams,
    secrets: readonly string[],
  ): Promise<TwilioObject> {
    try {
      return await this.postOnce(path, form, secrets);
    } catch (error) {
      if (!(error instanceof TwilioRequestError && error.retryable)) throw error;
    }
    await sleep(RETRY_DELAY_MS);
    return this.postOnce(path, form, secrets);
  }

  private async postOnce(
    path: string,
    form: URLSearchParams,
    secrets: readonly string[],
  ): Promise<TwilioObject> {
    const scrub = (text: string) => redact(text, [this.options.authToken, ...secrets]);
    let statusCode: number;
    let text: string;
    try {
      const response = await request(`${this.accountUrl}${path}`, {
        method: 'POST',
        headers: {
          authorization: this.authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'user-agent': 'voiceagent-twilio/1',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      statusCode = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw new TwilioRequestError(
        scrub(describeNetworkError(error, this.timeoutMs)),
        undefined,
        undefined,
        true,
      );
    }
    const body = parseObject(text);
    if (statusCode >= 200 && statusCode < 300) {
      if (!body)
        throw new TwilioRequestError(
          `Twilio answered ${statusCode} without JSON`,
          statusCode,
          undefined,
          false,
        );
      return body;
    }
    const code = typeof body?.['code'] === 'number' ? body['code'] : undefined;
    const message = typeof body?.['message'] === 'string' ? body['message'] : undefined;
    const described = message
      ? `Twilio error ${code ?? 'without a code'} (HTTP ${statusCode}): ${message}`
      : `Twilio answered HTTP ${statusCode}`;
    throw new TwilioRequestError(
      scrub(described).slice(0, MAX_MESSAGE_CHARS),
      statusCode,
      code,
      statusCode >= 500,
    );
  }

  private tracked<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }
}

/** The TwiML of a call: connect its media, both ways, to the gateway, presenting the stream token. */
function streamTwiml(streamUrl: string, token: string): string {
  return (
    `<Response><Connect><Stream url="${escapeXml(streamUrl)}">` +
    `<Parameter name="token" value="${escapeXml(token)}"/>` +
    `</Stream></Connect></Response>`
  );
}

const XML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ENTITIES[c] ?? c);
}

function streamUrlOf(mediaUrl: string): string {
  const url = new URL(mediaUrl);
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new Error(`twilio carrier: mediaUrl must be ws:// or wss://, got ${url.protocol}`);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${MEDIA_ROUTE}`;
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function parseObject(text: string): TwilioObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as TwilioObject)
      : undefined;
  } catch {
    return undefined;
  }
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `Twilio did not answer within ${timeoutMs} ms`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return `Twilio could not be reached: ${code ? `${code}: ` : ''}${message}`;
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  return out;
}

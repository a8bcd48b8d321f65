import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/**
 * A fake of Twilio's Calls and IncomingPhoneNumbers REST API for tests: a real HTTP server on 127.0.0.1, port 0. It checks Basic auth,
 * parses the form, records every request, and answers like Twilio: `201` with a Calls JSON on create, the
 * call's JSON on update, and Twilio's JSON errors (`{code, message, more_info, status}`). Tests can script the
 * next answers (errors, 500s, dropped connections, stalls) and send status callbacks signed the way Twilio
 * signs them. For tests only.
 *
 * Updates follow Twilio's documented states: `Status=completed` ends a call in progress and answers 21220 for
 * one that is not; `Status=canceled` cancels a queued or ringing call and leaves one in progress alone.
 */

export type FakeCallStatus =
  | 'queued'
  | 'ringing'
  | 'in-progress'
  | 'completed'
  | 'busy'
  | 'no-answer'
  | 'failed'
  | 'canceled';

export interface FakeTwilioCall {
  readonly sid: string;
  readonly to: string;
  readonly from: string;
  status: FakeCallStatus;
  /** Where status callbacks of this call go (the create request's `StatusCallback`). */
  readonly statusCallback: string | undefined;
  readonly createdAt: Date;
  answeredAt: Date | undefined;
  callbacksSent: number;
}

/** A number of the fake account (Twilio's IncomingPhoneNumbers resource). */
export interface FakeIncomingNumber {
  readonly sid: string;
  readonly phoneNumber: string;
  voiceUrl: string;
  voiceMethod: string;
  statusCallback: string;
}

export interface RecordedTwilioRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly form: URLSearchParams;
}

/** An answer scripted for the next request, instead of the normal one. */
export type FakeAnswer =
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly code: number;
      /** Fixed, or made from the request's form (to see what an echo of it would do). */
      readonly message: string | ((form: URLSearchParams) => string);
    }
  /** The request is handled normally, only after `ms`. */
  | { readonly kind: 'stall'; readonly ms: number }
  /** The connection is destroyed without an answer. */
  | { readonly kind: 'drop' };

export const INVALID_TO_NUMBER: FakeAnswer = {
  kind: 'error',
  status: 400,
  code: 21211,
  message: "The 'To' number is not a valid phone number.",
};
export const SERVER_ERROR: FakeAnswer = {
  kind: 'error',
  status: 500,
  code: 20500,
  message: 'Internal Server Error',
};

const API_VERSION = '2010-04-01';
const TERMINAL: ReadonlySet<FakeCallStatus> = new Set([
  'completed',
  'busy',
  'no-answer',
  'failed',
  'canceled',
]);

export interface FakeTwilioOptions {
  readonly accountSid?: string;
  readonly authToken?: string;
}

export class FakeTwilioRestServer {
  readonly requests: RecordedTwilioRequest[] = [];
  readonly calls = new Map<string, FakeTwilioCall>();
  /** The account's numbers, by sid. */
  readonly incomingNumbers = new Map<string, FakeIncomingNumber>();
  private readonly scripted: FakeAnswer[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    readonly accountSid: string,
    readonly authToken: string,
  ) {}

  static async start(options: FakeTwilioOptions = {}): Promise<FakeTwilioRestServer> {
    const accountSid = options.accountSid ?? `AC${randomBytes(16).toString('hex')}`;
    const authToken = options.authToken ?? randomBytes(16).toString('hex');
    let fake: FakeTwilioRestServer | undefined;
    const server = createServer((req, res) => {
      fake?.handle(req, res).catch(() => res.destroy());
    });
    fake = new FakeTwilioRestServer(server, accountSid, authToken);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** `http://127.0.0.1:<port>`: the carrier's `apiBase`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next requests, in order, get these answers instead of the normal ones. */
  answerNext(...answers: FakeAnswer[]): void {
    this.scripted.push(...answers);
  }

  /** Requests to the Calls resource of one call (`sid`), or to create calls (no `sid`). */
  requestsTo(sid?: string): RecordedTwilioRequest[] {
    const path = this.callsPath(sid);
    return this.requests.filter((r) => r.path === path);
  }

  /** Adds a number to the account, its incoming calls pointing at `voiceUrl` (Twilio's demo by default). */
  addIncomingNumber(
    phoneNumber: string,
    voiceUrl = 'https://demo.twilio.com/welcome/voice/',
  ): FakeIncomingNumber {
    const number: FakeIncomingNumber = {
      sid: `PN${randomBytes(16).toString('hex')}`,
      phoneNumber,
      voiceUrl,
      voiceMethod: 'POST',
      statusCallback: '',
    };
    this.incomingNumbers.set(number.sid, number);
    return number;
  }

  /**
   * A caller rings the number: Twilio's signed incoming-call webhook to the number's `VoiceUrl` (or `url`,
   * where the receiver really listens), as `postSigned` sends it. Returns the answer (TwiML) and the CallSid.
   */
  async ringIncoming(
    numberSid: string,
    from: string,
    options: { url?: string; authToken?: string; signature?: string | null } = {},
  ): Promise<{ status: number; body: string; callSid: string }> {
    const number = this.incomingNumbers.get(numberSid);
    if (!number) throw new Error(`fake twilio: no number ${numberSid}`);
    const callSid = `CA${randomBytes(16).toString('hex')}`;
    const url = options.url ?? number.voiceUrl;
    const params = {
      AccountSid: this.accountSid,
      ApiVersion: API_VERSION,
      CallSid: callSid,
      CallStatus: 'ringing',
      Called: number.phoneNumber,
      Caller: from,
      Direction: 'inbound',
      From: from,
      To: number.phoneNumber,
    };
    const answer = await this.postSigned(url, params, {
      ...(options.authToken !== undefined ? { authToken: options.authToken } : {}),
      ...(options.signature !== undefined ? { signature: options.signature } : {}),
    });
    return { ...answer, callSid };
  }

  setCallStatus(sid: string, status: FakeCallStatus): void {
    const call = this.callOf(sid);
    call.status = status;
    if (status === 'in-progress') call.answeredAt = new Date();
  }

  /**
   * Moves the call to `callStatus` and posts Twilio's status callback for it to the call's `StatusCallback`,
   * signed. Returns the receiver's HTTP status.
   */
  async sendStatusCallback(
    sid: string,
    callStatus: FakeCallStatus | 'initiated',
    extra: Record<string, string> = {},
  ): Promise<number> {
    const call = this.callOf(sid);
    if (!call.statusCallback) throw new Error(`fake twilio: call ${sid} has no StatusCallback`);
    if (callStatus !== 'initiated') this.setCallStatus(sid, callStatus);
    call.callbacksSent++;
    const params = statusCallbackParams(
      { accountSid: this.accountSid, sid, to: call.to, from: call.from },
      callStatus,
      {
        SequenceNumber: String(call.callbacksSent - 1),
        ...(TERMINAL.has(call.status) ? { CallDuration: String(talkSeconds(call)) } : {}),
        ...extra,
      },
    );
    return (await this.postSigned(call.statusCallback, params)).status;
  }

  /**
   * POSTs `params` form-encoded to `url` with `X-Twilio-Signature` computed as Twilio does, over `signedUrl`
   * (default `url`: what Twilio requested, before any proxy) with `authToken` (default this account's).
   * `signature` replaces the computed header; null sends none.
   */
  async postSigned(
    url: string,
    params: Record<string, string>,
    options: { signedUrl?: string; authToken?: string; signature?: string | null } = {},
  ): Promise<{ status: number; body: string }> {
    const signature =
      options.signature === undefined
        ? signTwilioRequest(options.signedUrl ?? url, params, options.authToken ?? this.authToken)
        : options.signature;
    const response = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent': 'TwilioProxy/1.1',
        ...(signature !== null ? { 'x-twilio-signature': signature } : {}),
      },
      body: new URLSearchParams(params).toString(),
    });
    return { status: response.statusCode, body: await response.body.text() };
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private callsPath(sid?: string): string {
    const base = `/${API_VERSION}/Accounts/${this.accountSid}/Calls`;
    return sid === undefined ? `${base}.json` : `${base}/${sid}.json`;
  }

  private callOf(sid: string): FakeTwilioCall {
    const call = this.calls.get(sid);
    if (!call) throw new Error(`fake twilio: no call ${sid}`);
    return call;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    this.requests.push({
      method,
      path,
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      form,
    });
    const scripted = this.authorized(req.headers.authorization) ? this.scripted.shift() : undefined;
    if (scripted?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (scripted?.kind === 'stall') await this.wait(scripted.ms);
    if (res.destroyed) return;
    const answer = !this.authorized(req.headers.authorization)
      ? twilioError(401, 20003, 'Authenticate')
      : scripted?.kind === 'error'
        ? twilioError(
            scripted.status,
            scripted.code,
            typeof scripted.message === 'string' ? scripted.message : scripted.message(form),
          )
        : this.route(method, path, form, query);
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(answer.body));
  }

  private route(method: string, path: string, form: URLSearchParams, query: URLSearchParams): Answer {
    if (method === 'POST' && path === this.callsPath()) return this.create(form);
    const numbers = `/${API_VERSION}/Accounts/${this.accountSid}/IncomingPhoneNumbers`;
    if (path === `${numbers}.json` && method === 'GET') return this.listNumbers(query);
    if (path.startsWith(`${numbers}/`)) return this.updateNumber(method, path, form);
    const sid = new RegExp(`^/${API_VERSION}/Accounts/${this.accountSid}/Calls/([^/]+)\\.json$`).exec(
      path,
    )?.[1];
    const call = sid === undefined ? undefined : this.calls.get(sid);
    if (!call) return twilioError(404, 20404, `The requested resource ${path} was not found`);
    if (method === 'GET') return { status: 200, body: this.callJson(call) };
    if (method === 'POST') return this.update(call, form);
    return twilioError(405, 20004, 'Method not allowed');
  }

  private create(form: URLSearchParams): Answer {
    const to = form.get('To') ?? '';
    const from = form.get('From');
    if (!/^\+[1-9]\d{1,14}$/.test(to))
      return twilioError(400, 21211, "The 'To' number is not a valid phone number.");
    if (!from) return twilioError(400, 21603, "A 'From' phone number is required.");
    if (!form.get('Twiml') && !form.get('Url')) return twilioError(400, 21205, 'Url parameter is required.');
    const call: FakeTwilioCall = {
      sid: `CA${randomBytes(16).toString('hex')}`,
      to,
      from,
      status: 'queued',
      statusCallback: form.get('StatusCallback') ?? undefined,
      createdAt: new Date(),
      answeredAt: undefined,
      callbacksSent: 0,
    };
    this.calls.set(call.sid, call);
    return { status: 201, body: this.callJson(call) };
  }

  /** `GET .../IncomingPhoneNumbers.json?PhoneNumber=`: the account's numbers, filtered by number. */
  private listNumbers(query: URLSearchParams): Answer {
    const wanted = query.get('PhoneNumber');
    const numbers = [...this.incomingNumbers.values()].filter(
      (n) => wanted === null || n.phoneNumber === wanted,
    );
    return {
      status: 200,
      body: {
        incoming_phone_numbers: numbers.map((n) => this.numberJson(n)),
        page: 0,
        page_size: 50,
        start: 0,
        end: Math.max(0, numbers.length - 1),
      },
    };
  }

  /** `POST .../IncomingPhoneNumbers/{sid}.json`: updates VoiceUrl, VoiceMethod, StatusCallback. */
  private updateNumber(method: string, path: string, form: URLSearchParams): Answer {
    const sid = /\/IncomingPhoneNumbers\/([^/]+)\.json$/.exec(path)?.[1];
    const number = sid === undefined ? undefined : this.incomingNumbers.get(sid);
    if (!number) return twilioError(404, 20404, `The requested resource ${path} was not found`);
    if (method !== 'POST') return twilioError(405, 20004, 'Method not allowed');
    const voiceUrl = form.get('VoiceUrl');
    if (voiceUrl !== null && voiceUrl !== '' && !/^https?:\/\//.test(voiceUrl))
      return twilioError(400, 21502, 'VoiceUrl is not valid');
    if (voiceUrl !== null) number.voiceUrl = voiceUrl;
    number.voiceMethod = form.get('VoiceMethod') ?? number.voiceMethod;
    number.statusCallback = form.get('StatusCallback') ?? number.statusCallback;
    return { status: 200, body: this.numberJson(number) };
  }

  private numberJson(number: FakeIncomingNumber): Record<string, unknown> {
    return {
      account_sid: this.accountSid,
      sid: number.sid,
      phone_number: number.phoneNumber,
      friendly_name: number.phoneNumber,
      voice_url: number.voiceUrl,
      voice_method: number.voiceMethod,
      status_callback: number.statusCallback,
      status_callback_method: 'POST',
      api_version: API_VERSION,
      uri: `/${API_VERSION}/Accounts/${this.accountSid}/IncomingPhoneNumbers/${number.sid}.json`,
    };
  }

  private update(call: FakeTwilioCall, form: URLSearchParams): Answer {
    const status = form.get('Status');
    if (status === 'completed') {
      if (call.status !== 'in-progress') return notInProgress();
      call.status = 'completed';
    } else if (status === 'canceled') {
      if (TERMINAL.has(call.status)) return notInProgress();
      if (call.status === 'queued' || call.status === 'ringing') call.status = 'canceled';
    } else if (status !== null) {
      return twilioError(400, 21218, `Invalid value '${status}' for Status`);
    }
    return { status: 200, body: this.callJson(call) };
  }

  private callJson(call: FakeTwilioCall): Record<string, unknown> {
    const uri = this.callsPath(call.sid);
    return {
      account_sid: this.accountSid,
      annotation: null,
      answered_by: null,
      api_version: API_VERSION,
      caller_name: null,
      date_created: call.createdAt.toUTCString(),
      date_updated: new Date().toUTCString(),
      direction: 'outbound-api',
      duration: TERMINAL.has(call.status) ? String(talkSeconds(call)) : null,
      end_time: null,
      forwarded_from: null,
      from: call.from,
      from_formatted: call.from,
      group_sid: null,
      parent_call_sid: null,
      phone_number_sid: null,
      price: null,
      price_unit: 'USD',
      queue_time: '0',
      sid: call.sid,
      start_time: call.answeredAt?.toUTCString() ?? null,
      status: call.status,
      subresource_uris: {
        notifications: uri.replace(/\.json$/, '/Notifications.json'),
        recordings: uri.replace(/\.json$/, '/Recordings.json'),
      },
      to: call.to,
      to_formatted: call.to,
      trunk_sid: null,
      uri,
    };
  }

  private authorized(header: string | undefined): boolean {
    const expected = `Basic ${Buffer.from(`${this.accountSid}:${this.authToken}`).toString('base64')}`;
    return header === expected;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}

/**
 * The parameters of a Twilio call status callback (the ones Twilio always sends), plus `extra`
 * (`CallDuration`, `ErrorCode`, `SipResponseCode`, ...).
 */
export function statusCallbackParams(
  call: { accountSid: string; sid: string; to: string; from: string },
  callStatus: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    AccountSid: call.accountSid,
    ApiVersion: API_VERSION,
    CallSid: call.sid,
    CallStatus: callStatus,
    Called: call.to,
    Caller: call.from,
    CallbackSource: 'call-progress-events',
    Direction: 'outbound-api',
    From: call.from,
    SequenceNumber: '0',
    Timestamp: new Date().toUTCString(),
    To: call.to,
    ...extra,
  };
}

/**
 * `X-Twilio-Signature` as Twilio computes it: base64 HMAC-SHA1 keyed with the auth token over the URL followed
 * by each parameter's name and value, sorted by name. Written apart from the platform's verifier on purpose.
 */
export function signTwilioRequest(url: string, params: Record<string, string>, authToken: string): string {
  const data = Object.keys(params)
    .sort()
    .reduce((signed, name) => signed + name + params[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

function talkSeconds(call: FakeTwilioCall): number {
  return call.answeredAt ? Math.max(1, Math.ceil((Date.now() - call.answeredAt.getTime()) / 1000)) : 0;
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function twilioError(status: number, code: number, message: string): Answer {
  return { status, body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status } };
}

function notInProgress(): Answer {
  return twilioError(400, 21220, 'Call is not in-progress. Cannot redirect.');
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { verifySpeechToken } from '../../core/auth/speech-tokens.ts';
import type { StreamTokens } from '../../core/auth/stream-tokens.ts';
import type { Coordinator } from '../../core/coord/types.ts';
import { newId } from '../../core/ids.ts';
import { LiveTranscriptionBilling } from '../../core/speech/live-billing.ts';
import type { Store } from '../../core/store/types.ts';
import {
  engineFor,
  type LiveSttEngines,
  servedLanguages,
  utterancesFor,
} from '../../pipeline/speech/utterances.ts';
import type { StreamTransport } from '../transport.ts';
import { type ErrorEventCode, settingsFromQuery } from './protocol.ts';
import {
  type AdmittedSession,
  DEFAULT_LIVE_STT_LIMITS,
  type LiveSttLimits,
  LiveTranscriptionSession,
} from './session.ts';

export interface LiveTranscriptionOptions {
  readonly store: Store;
  readonly coord: Coordinator;
  readonly tokens: StreamTokens;
  /** The node's call STT (undefined: no language is served) and VAD (cuts utterances in `auto`). */
  readonly engines: LiveSttEngines;
  readonly logger: Logger;
  readonly limits?: Partial<LiveSttLimits>;
}

/** What a session's opening request carries. */
export interface SessionRequest {
  readonly authorization: string;
  readonly token: string | undefined;
  /** The query without `token`. */
  readonly query: string;
}

export type Admission =
  | { readonly ok: true; readonly session: AdmittedSession }
  | { readonly ok: false; readonly code: ErrorEventCode; readonly message: string };

const BEARER = 'Bearer ';
const MAX_KEY_LENGTH = 128;

const refuse = (code: ErrorEventCode, message: string): Admission => ({ ok: false, code, message });

/**
 * Live speech to text on the gateway: admits a session before its socket opens (settings, key or token,
 * language, wallet, the workspace's session slots), then runs it. Slots are coordinator leases, so the ceiling
 * holds across gateway nodes and a dead node's sessions free theirs within a lease.
 */
export class LiveTranscriptionService {
  readonly limits: LiveSttLimits;
  private readonly billing: LiveTranscriptionBilling;
  private readonly sessions = new Set<LiveTranscriptionSession>();
  private readonly log: Logger;

  constructor(private readonly options: LiveTranscriptionOptions) {
    this.limits = { ...DEFAULT_LIVE_STT_LIMITS, ...options.limits };
    this.billing = new LiveTranscriptionBilling(options.store);
    this.log = options.logger.child({ component: 'live-stt' });
  }

  get openSessions(): number {
    return this.sessions.size;
  }

  async admit(request: SessionRequest): Promise<Admission> {
    const parsed = settingsFromQuery(request.query);
    if (!parsed.ok) return refuse('invalid_request', parsed.message);
    const settings = parsed.settings;
    const who = await this.authenticate(request);
    if ('code' in who) return who;
    if (who.language !== undefined && who.language !== settings.language)
      return refuse('invalid_request', `language_code: the token was minted for ${who.language}`);
    const engine = engineFor(this.options.engines, settings.language);
    if (!engine)
      return refuse(
        'unsupported_language',
        `no speech engine on this deployment transcribes ${settings.language} (${servedLanguages(this.options.engines)})`,
      );
    if (!(await this.billing.canStart(who.workspaceId)))
      return refuse(
        'insufficient_balance',
        `the wallet must cover a minute of audio (${LiveTranscriptionBilling.minimumPaise} paise) to start`,
      );
    const sessionId = newId('liveTranscription');
    const taken = await this.options.coord.slots.acquire(
      this.slotScope(who.workspaceId),
      this.limits.sessionsPerWorkspace,
      sessionId,
      this.limits.slotLeaseMs,
    );
    if (!taken)
      return refuse(
        'too_many_sessions',
        `the workspace has ${this.limits.sessionsPerWorkspace} live sessions open already; end one first`,
      );
    return {
      ok: true,
      session: { sessionId, workspaceId: who.workspaceId, settings, engine },
    };
  }

  /** An admitted session whose socket never opened (the client left during admission). */
  async abandon(session: AdmittedSession): Promise<void> {
    await this.options.coord.slots.release(this.slotScope(session.workspaceId), session.sessionId);
  }

  start(admitted: AdmittedSession, transport: StreamTransport): LiveTranscriptionSession {
    const { settings } = admitted;
    const scope = this.slotScope(admitted.workspaceId);
    const { slots } = this.options.coord;
    const session = new LiveTranscriptionSession(
      admitted,
      transport,
      {
        utterances: (listener) => utterancesFor(this.options.engines, settings, listener),
        settle: (audioMs) => this.billing.settle(admitted.workspaceId, admitted.sessionId, audioMs),
        renewSlot: async () => {
          const held = await slots.renew(scope, admitted.sessionId, this.limits.slotLeaseMs);
          if (!held) await slots.hold(scope, admitted.sessionId, this.limits.slotLeaseMs);
        },
        releaseSlot: () => slots.release(scope, admitted.sessionId),
      },
      this.limits,
      this.log,
      (ended) => this.sessions.delete(ended),
    );
    this.sessions.add(session);
    session.begin();
    return session;
  }

  /** Ends every open session (the gateway shuts down) and waits, at most `waitMs`, for them to be billed. */
  async closeAll(waitMs = 5_000): Promise<void> {
    const ending = Promise.allSettled([...this.sessions].map((session) => session.shutdown()));
    await Promise.race([ending, sleep(waitMs, undefined, { ref: false })]);
  }

  private slotScope(workspaceId: string): string {
    return `live-stt:${workspaceId}`;
  }

  private async authenticate(
    request: SessionRequest,
  ): Promise<{ workspaceId: string; language: string | undefined } | (Admission & { ok: false })> {
    if (request.authorization) {
      if (!request.authorization.startsWith(BEARER))
        return {
          ok: false,
          code: 'unauthorized',
          message: 'Authorization header must be "Bearer <API_KEY>"',
        };
      const key = request.authorization.slice(BEARER.length).trim();
      if (!key || key.length > MAX_KEY_LENGTH)
        return { ok: false, code: 'unauthorized', message: 'unknown API key' };
      const record = await this.options.store.apiKeys.findByKey(key);
      if (!record) return { ok: false, code: 'unauthorized', message: 'unknown API key' };
      if (record.revokedAt !== null)
        return { ok: false, code: 'forbidden', message: 'this API key was revoked' };
      return { workspaceId: record.workspaceId, language: undefined };
    }
    if (request.token === undefined)
      return {
        ok: false,
        code: 'unauthorized',
        message: 'send Authorization: Bearer <API_KEY>, or ?token= with a token from POST /v2/stream-tokens',
      };
    const verdict = await verifySpeechToken(this.options.tokens, request.token);
    if (verdict.ok) return { workspaceId: verdict.grant.workspaceId, language: verdict.grant.language };
    switch (verdict.reason) {
      case 'expired':
        return { ok: false, code: 'token_expired', message: 'the stream token has expired; mint a new one' };
      case 'reused':
        return {
          ok: false,
          code: 'token_reused',
          message: 'the stream token was used already; mint a new one',
        };
      case 'check_failed':
        return { ok: false, code: 'service_unavailable', message: 'the token could not be checked; retry' };
      default:
        return {
          ok: false,
          code: 'unauthorized',
          message: 'the stream token is not valid for live speech to text',
        };
    }
  }
}

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { RingOutcome, RingOutcomeSink } from '../../../core/calls/carrier.ts';
import type { CallRecord } from '../../../core/store/types.ts';
import { CLOSE } from '../../close-codes.ts';
import type { StreamTokens } from '../../tokens.ts';
import type { SandboxBehaviour } from './behaviour.ts';
import type { PreparedSpeech } from './callee-audio.ts';
import {
  answeringMachine,
  type CalleeConduct,
  type ConductTools,
  hangUpSoon,
  staySilent,
} from './conduct.ts';
import { ScriptedConversation } from './conversation.ts';
import { type StreamClosed, TwilioMediaStream } from './media-stream.ts';
import { Mouth } from './mouth.ts';

/**
 * One simulated call of the sandbox carrier: it rings, then either reports how the call ended without media
 * (busy, no answer, carrier failure) or answers by opening a Twilio media stream to the gateway and behaves as
 * its magic number says (behaviour.ts) until one side hangs up.
 */

/** The stream token outlives the ring and the connection by far; it is good once anyway. */
const STREAM_TOKEN_TTL_MS = 60_000;
/** Close codes by which the gateway refuses a stream's token: the call never got media. */
const TOKEN_REFUSALS: ReadonlySet<number> = new Set([
  CLOSE.token_missing,
  CLOSE.token_malformed,
  CLOSE.token_bad_signature,
  CLOSE.token_expired,
  CLOSE.token_reused,
  CLOSE.token_wrong_call,
  CLOSE.token_wrong_carrier,
  CLOSE.token_check_failed,
]);

export interface SandboxCalleeOptions {
  readonly call: Pick<CallRecord, 'id' | 'workspaceId'>;
  readonly carrierCallId: string;
  readonly accountSid: string;
  readonly behaviour: SandboxBehaviour;
  /** `ws://host:port/media/twilio` of the gateway. */
  readonly mediaUrl: string;
  readonly tokens: StreamTokens;
  readonly reportRingOutcome: RingOutcomeSink;
  readonly ringMs: number;
  readonly answerDelayMs: number;
  readonly speech: PreparedSpeech;
  readonly callerScript: readonly string[];
  readonly logger: Logger;
  /** Called once, when the simulated call is over. */
  readonly onEnded: () => void;
}

type CalleeState = 'ringing' | 'answered' | 'ended';

export class SandboxCallee {
  private state: CalleeState = 'ringing';
  private ringTimer: NodeJS.Timeout | undefined;
  private stream: TwilioMediaStream | undefined;
  /** The callee (or the carrier) hung up: the stream's end is no failure. */
  private hangingUp = false;
  private readonly mouth = new Mouth();

  constructor(private readonly o: SandboxCalleeOptions) {}

  /** Starts ringing; everything else happens on timers and the media stream. */
  start(): void {
    const { behaviour, ringMs, answerDelayMs } = this.o;
    if (behaviour === 'busy') this.ring(answerDelayMs, () => this.report('busy'));
    else if (behaviour === 'no_answer') this.ring(ringMs, () => this.report('ring_timeout'));
    else if (behaviour === 'carrier_failure')
      this.ring(answerDelayMs, () => this.report('carrier_failed', 'sandbox: simulated carrier failure'));
    else this.ring(answerDelayMs, () => this.answer());
  }

  /** Ends the call without reporting an outcome: stops the ringing, or sends `stop` and closes the stream. */
  hangUp(): Promise<void> {
    this.hangingUp = true;
    if (this.state === 'ringing') {
      clearTimeout(this.ringTimer);
      this.finish();
      this.o.logger.info('sandbox call hung up while ringing');
      return Promise.resolve();
    }
    return this.stream?.stop() ?? Promise.resolve();
  }

  private ring(ms: number, then: () => void): void {
    this.ringTimer = setTimeout(() => {
      try {
        then();
      } catch (err) {
        // A throw from a timer would take the whole process down with every other call on it.
        this.o.logger.error({ err }, 'sandbox call failed');
        this.stream?.stop().catch(() => {});
        this.report('carrier_failed', 'sandbox: simulated call failed');
      }
    }, ms);
  }

  private answer(): void {
    if (this.state !== 'ringing') return;
    let token: string;
    try {
      token = this.o.tokens.mint(this.o.call.id, 'twilio', STREAM_TOKEN_TTL_MS);
    } catch (err) {
      this.o.logger.error({ err }, 'sandbox call could not get a stream token');
      this.report('carrier_failed', 'sandbox: no stream token');
      return;
    }
    this.state = 'answered';
    const tools: ConductTools = {
      mouth: this.mouth,
      speech: this.o.speech,
      hangUp: () => {
        this.o.logger.info('sandbox callee hangs up');
        void this.hangUp();
      },
    };
    const conduct = this.conductFor(tools);
    this.stream = new TwilioMediaStream(
      {
        url: this.o.mediaUrl,
        accountSid: this.o.accountSid,
        callSid: this.o.carrierCallId,
        streamSid: `MZ${randomBytes(16).toString('hex')}`,
        token,
      },
      {
        nextFrame: () => this.mouth.next(),
        heard: (frame, streamMs) => conduct.tick(frame, streamMs),
        closed: (end) => this.streamClosed(end),
      },
      this.o.logger,
    );
    this.o.logger.info('sandbox call answered');
  }

  private conductFor(tools: ConductTools): CalleeConduct {
    switch (this.o.behaviour) {
      case 'answering_machine':
        return answeringMachine(tools);
      case 'silent':
        return staySilent();
      case 'hangs_up':
        return hangUpSoon(tools);
      default:
        return new ScriptedConversation(this.o.callerScript, tools);
    }
  }

  private streamClosed(end: StreamClosed): void {
    const refused = !end.opened || TOKEN_REFUSALS.has(end.code);
    if (refused && !this.hangingUp) {
      this.o.logger.warn({ code: end.code, reason: end.reason }, 'sandbox media stream could not connect');
      this.report('carrier_failed', `sandbox: media stream refused (${end.code} ${end.reason})`.trim());
      return;
    }
    this.o.logger.info({ code: end.code, reason: end.reason }, 'sandbox media stream ended');
    this.finish();
  }

  private report(outcome: RingOutcome, detail?: string): void {
    if (this.state === 'ended') return;
    this.finish();
    const { workspaceId, id: callId } = this.o.call;
    this.o.logger.info({ outcome }, 'sandbox call reports its ring outcome');
    let reported: Promise<void>;
    try {
      reported = this.o.reportRingOutcome({ workspaceId, callId }, outcome, detail);
    } catch (err) {
      reported = Promise.reject(err);
    }
    reported.catch((err: unknown) =>
      this.o.logger.error({ err, outcome }, 'reporting a sandbox ring outcome failed'),
    );
  }

  private finish(): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    clearTimeout(this.ringTimer);
    this.o.onEnded();
  }
}

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Carrier, RingOutcomeSink } from '../../../core/calls/carrier.ts';
import type { CallRecord } from '../../../core/store/types.ts';
import type { VoiceRouter } from '../../../engines/tts/index.ts';
import type { StreamTokens } from '../../tokens.ts';
import {
  behaviourFor,
  DEFAULT_ANSWER_DELAY_MS,
  DEFAULT_CALLER_SCRIPT,
  DEFAULT_RING_MS,
} from './behaviour.ts';
import { SandboxCallee } from './callee.ts';
import { PreparedSpeech } from './callee-audio.ts';
import { prepareMachine } from './conduct.ts';
import { ScriptedConversation } from './conversation.ts';

/**
 * The sandbox carrier (docs/architecture.md, "Carriers and engines"): places calls with no phone network. `originate` answers at
 * once with a Twilio-like call id (`CA` + 32 hex) and starts a simulated callee that behaves by the destination's
 * last digit (behaviour.ts): it reports busy, no answer or a carrier failure through the ring outcome sink, or
 * answers by connecting to the gateway's Twilio media route like a real carrier would.
 *
 * The callees' lines are synthesized when the carrier is built, so calls never wait for the TTS engine.
 */

export interface SandboxCarrierOptions {
  /** `ws://host:port` of a media gateway; callees connect to its `/media/twilio` route. */
  readonly gatewayUrl: string;
  /** The gateway's stream tokens: each answered call mints a one-time token for its media stream. */
  readonly tokens: StreamTokens;
  readonly reportRingOutcome: RingOutcomeSink;
  /** Ring time of a number that never answers (`SANDBOX_RING_MS`); default 3000. */
  readonly ringMs?: number;
  /** Ring time before answering, and before busy or a carrier failure is reported; default 400. */
  readonly answerDelayMs?: number;
  /** Speaks for the simulated callees and answering machines. The carrier does not close it. */
  readonly voices: VoiceRouter;
  readonly logger: Logger;
  /** What a conversing callee says, one line per agent turn. */
  readonly callerScript?: readonly string[];
}

const MEDIA_ROUTE = '/media/twilio';

export class SandboxCarrier implements Carrier {
  readonly name = 'sandbox';
  private readonly mediaUrl: string;
  private readonly accountSid = `AC${randomBytes(16).toString('hex')}`;
  private readonly ringMs: number;
  private readonly answerDelayMs: number;
  private readonly callerScript: readonly string[];
  private readonly speech: PreparedSpeech;
  private readonly logger: Logger;
  private readonly callees = new Map<string, SandboxCallee>();
  private idleWaiters: Array<() => void> = [];
  private closed = false;

  constructor(private readonly options: SandboxCarrierOptions) {
    this.mediaUrl = mediaUrlOf(options.gatewayUrl);
    this.ringMs = durationOption('ringMs', options.ringMs, DEFAULT_RING_MS);
    this.answerDelayMs = durationOption('answerDelayMs', options.answerDelayMs, DEFAULT_ANSWER_DELAY_MS);
    this.callerScript = [...(options.callerScript ?? DEFAULT_CALLER_SCRIPT)];
    this.logger = options.logger.child({ component: 'sandbox_carrier' });
    this.speech = new PreparedSpeech(options.voices, this.logger);
    prepareMachine(this.speech);
    ScriptedConversation.prepare(this.speech, this.callerScript);
  }

  /** Simulated calls ringing or connected. */
  get activeCalls(): number {
    return this.callees.size;
  }

  /** Resolves once no simulated call rings or is connected (at once when none does): a draining node waits. */
  idle(): Promise<void> {
    if (this.callees.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves once the callees' lines are synthesized (or failed): warm-up and tests. */
  ready(): Promise<void> {
    return this.speech.settled();
  }

  async originate(call: CallRecord): Promise<{ carrierCallId: string }> {
    if (this.closed) throw new Error('sandbox carrier: closed');
    if (!call.toNumber) throw new Error('sandbox carrier: the call has no destination number');
    const carrierCallId = `CA${randomBytes(16).toString('hex')}`;
    const behaviour = behaviourFor(call.toNumber);
    const logger = this.logger.child({ callId: call.id, carrierCallId, behaviour });
    const callee = new SandboxCallee({
      call,
      carrierCallId,
      accountSid: this.accountSid,
      behaviour,
      mediaUrl: this.mediaUrl,
      tokens: this.options.tokens,
      reportRingOutcome: this.options.reportRingOutcome,
      ringMs: this.ringMs,
      answerDelayMs: this.answerDelayMs,
      speech: this.speech,
      callerScript: this.callerScript,
      logger,
      onEnded: () => this.ended(carrierCallId),
    });
    this.callees.set(carrierCallId, callee);
    logger.info('sandbox call placed');
    callee.start();
    return { carrierCallId };
  }

  /**
   * A simulated caller rings one of the workspace's numbers: the incoming call is already admitted (`dialing`,
   * core/calls/incoming.ts), so the caller connects to the gateway at once and converses by the caller script,
   * as a conversing callee does.
   */
  ringIn(call: Pick<CallRecord, 'id' | 'workspaceId'>, carrierCallId: string): void {
    if (this.closed) return;
    const logger = this.logger.child({ callId: call.id, carrierCallId, direction: 'inbound' });
    const caller = new SandboxCallee({
      call,
      carrierCallId,
      accountSid: this.accountSid,
      behaviour: 'converse',
      mediaUrl: this.mediaUrl,
      tokens: this.options.tokens,
      reportRingOutcome: this.options.reportRingOutcome,
      ringMs: this.ringMs,
      answerDelayMs: 0,
      speech: this.speech,
      callerScript: this.callerScript,
      logger,
      onEnded: () => this.ended(carrierCallId),
    });
    this.callees.set(carrierCallId, caller);
    logger.info('sandbox caller rings in');
    caller.start();
  }

  private ended(carrierCallId: string): void {
    this.callees.delete(carrierCallId);
    if (this.callees.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  async hangup(carrierCallId: string): Promise<void> {
    await this.callees.get(carrierCallId)?.hangUp();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.speech.close();
    await Promise.all([...this.callees.values()].map((callee) => callee.hangUp()));
  }
}

function mediaUrlOf(gatewayUrl: string): string {
  const url = new URL(gatewayUrl);
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new Error(`sandbox carrier: gatewayUrl must be ws:// or wss://, got ${url.protocol}`);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${MEDIA_ROUTE}`;
}

function durationOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`sandbox carrier: ${name} must be >= 0`);
  return value;
}

/**
 * Runs a CallSession as a carrier would, in call time: the test feeds caller audio frame by frame at 4x real
 * time (engines answer in wall time meanwhile), the simulated carrier plays the agent's audio 20 ms per frame,
 * and every session event is kept with the call time it happened at. Time only moves when the test feeds frames,
 * so what the test asserts about call time does not depend on how loaded the machine is.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentSettings } from '../../core/agents/types.ts';
import type { FakeOpenAiTranscriptionServer } from '../../engines/stt/testing/fake-openai-transcription-server.ts';
import type { CallVariables } from '../dialog/index.ts';
import { CallSession, type SessionEngines, type SessionEvent, type SessionOptions } from '../session.ts';
import { CallerScript } from './caller-script.ts';
import { SimulatedCarrier } from './simulated-carrier.ts';

const FRAME_SAMPLES = 320;
const FRAME_MS = 20;
/** Wall time per 20 ms frame: 4x real time, fast enough for a suite, slow enough for the engines to keep up. */
const WALL_MS_PER_FRAME = 5;
/**
 * Call time a test gives anything that waits on engines (wall-clock work: eSpeak's first load, a server's
 * answer): 30 s is 7.5 s of wall time at 4x, room for a loaded 2-core machine. `until` returns as soon as its
 * condition holds, so the bound costs nothing when the engines are quick.
 */
export const ENGINE_WAIT_MS = 30_000;

export interface TimedEvent {
  /** Call time when the session emitted it. */
  atMs: number;
  event: SessionEvent;
}

export interface HarnessOptions {
  agent: AgentSettings;
  engines: SessionEngines;
  variables?: CallVariables;
  voicemail?: SessionOptions['voicemail'];
  /** The fake transcription server whose answers follow what the caller said. */
  stt?: FakeOpenAiTranscriptionServer;
  /** Runs the agent's on_call tools. */
  tools?: SessionOptions['tools'];
  /** Told of replies started before the caller's turn was confirmed. */
  onSpeculation?: SessionOptions['onSpeculation'];
}

export class CallHarness {
  readonly carrier = new SimulatedCarrier();
  readonly script = new CallerScript();
  readonly events: TimedEvent[] = [];
  readonly session: CallSession;
  private frames = 0;

  constructor(options: HarnessOptions) {
    if (options.stt) options.stt.text = (request) => (request.audio ? this.script.textOf(request.audio) : '');
    this.session = new CallSession({
      agent: options.agent,
      variables: options.variables ?? { name: 'Ravi' },
      engines: options.engines,
      output: this.carrier,
      ...(options.voicemail !== undefined ? { voicemail: options.voicemail } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.onSpeculation ? { onSpeculation: options.onSpeculation } : {}),
      onEvent: (event) => this.events.push({ atMs: this.nowMs, event }),
    });
    this.carrier.onAck = (name, dropped) => this.session.playbackAck(name, dropped);
  }

  /** Call time: 20 ms per frame fed. */
  get nowMs(): number {
    return this.frames * FRAME_MS;
  }

  start(): this {
    this.session.start();
    return this;
  }

  /** Feeds `audio` (then silence up to `ms`, if longer), frame by frame, while the carrier plays. */
  async feed(audio: Int16Array | null, ms = audio ? audio.length / 16 : 0): Promise<void> {
    const frames = Math.ceil(ms / FRAME_MS);
    for (let i = 0; i < frames; i++) {
      const frame = new Int16Array(FRAME_SAMPLES);
      if (audio) frame.set(audio.subarray(i * FRAME_SAMPLES, (i + 1) * FRAME_SAMPLES));
      this.frames++;
      this.script.frame(frame);
      this.session.audio(frame);
      this.carrier.tick();
      await sleep(WALL_MS_PER_FRAME);
    }
  }

  /** The caller says `text` (the fake STT will hear it): feeds the audio. */
  async say(audio: Int16Array, text: string): Promise<void> {
    this.script.utterance(audio.length, text);
    await this.feed(audio);
  }

  /** Feeds silence until `what` holds or `ms` of call time passed; whether it holds. */
  async until(what: () => boolean, ms: number): Promise<boolean> {
    for (let waited = 0; !what() && waited < ms; waited += FRAME_MS) await this.feed(null, FRAME_MS);
    return what();
  }

  /** Events of one type, with their call times. */
  all<T extends SessionEvent['type']>(
    type: T,
  ): Array<{ atMs: number; event: Extract<SessionEvent, { type: T }> }> {
    return this.events.filter(
      (e): e is { atMs: number; event: Extract<SessionEvent, { type: T }> } => e.event.type === type,
    );
  }

  /** The first event of a type that matches, if any. */
  first<T extends SessionEvent['type']>(
    type: T,
    match: (event: Extract<SessionEvent, { type: T }>) => boolean = () => true,
  ): { atMs: number; event: Extract<SessionEvent, { type: T }> } | undefined {
    return this.all(type).find((e) => match(e.event));
  }

  /** Whether the agent turn `turnId` has played to its end. */
  spoke(turnId: string): boolean {
    return this.first('agent_turn', (e) => e.turnId === turnId) !== undefined;
  }

  /** The events, compactly, for assertion messages. */
  log(): string {
    return JSON.stringify(
      this.events
        .filter((e) => e.event.type !== 'transcript' && e.event.type !== 'latency')
        .map((e) => ({ at: e.atMs, ...e.event })),
    );
  }
}

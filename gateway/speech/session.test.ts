import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import type { UtteranceListener, Utterances } from '../../pipeline/speech/utterances.ts';
import type { SendStatus, StreamTransport } from '../transport.ts';
import { DEFAULT_LIVE_STT_LIMITS, LiveTranscriptionSession } from './session.ts';

/** The socket as the session sees it: what it sent and how it closed. */
class RecordingTransport implements StreamTransport {
  readonly sent: Array<Record<string, unknown>> = [];
  closedWith: [number, string] | undefined;
  send(data: string | Uint8Array): SendStatus {
    this.sent.push(JSON.parse(String(data)) as Record<string, unknown>);
    return 'sent';
  }
  bufferedAmount(): number {
    return 0;
  }
  cork(fn: () => void): void {
    fn();
  }
  close(code: number, reason: string): void {
    this.closedWith = [code, reason];
  }
}

/** Brackets as the client sends them; each closed utterance's final is the count of frames it took. */
class CountingUtterances implements Utterances {
  private frames = 0;
  private count = 0;
  open = false;
  constructor(private readonly listener: UtteranceListener) {}
  start(): boolean {
    if (this.open) return false;
    this.open = true;
    this.frames = 0;
    return true;
  }
  stop(atMs: number): boolean {
    if (!this.open) return false;
    this.open = false;
    this.listener.final({
      utterance: ++this.count,
      text: `${this.frames}`,
      words: [],
      language: 'en-IN',
      startMs: 0,
      endMs: atMs,
    });
    return true;
  }
  audio(): boolean {
    if (this.open) this.frames++;
    return this.open;
  }
  async finish(endMs: number): Promise<void> {
    this.stop(endMs);
  }
  close(): void {}
}

function session(limits: Partial<typeof DEFAULT_LIVE_STT_LIMITS> = {}) {
  const transport = new RecordingTransport();
  const settled: number[] = [];
  let released = 0;
  const live = new LiveTranscriptionSession(
    {
      sessionId: 'stt_1',
      workspaceId: 'ws_1',
      settings: { language: 'en-IN', encoding: 'mulaw', sampleRate: 8000, endpointing: 'manual' },
      engine: 'test',
    },
    transport,
    {
      utterances: (listener) => new CountingUtterances(listener),
      settle: async (audioMs) => {
        settled.push(audioMs);
        return {
          audioSecondsBilled: Math.ceil(audioMs / 1000),
          costPaise: Math.ceil(Math.ceil(audioMs / 1000) / 2),
        };
      },
      renewSlot: async () => {},
      releaseSlot: async () => {
        released++;
      },
    },
    { ...DEFAULT_LIVE_STT_LIMITS, ...limits },
    pino({ level: 'silent' }),
    () => {},
  );
  live.begin();
  const json = (frame: object) => live.receive(new TextEncoder().encode(JSON.stringify(frame)), false);
  return { live, transport, settled, released: () => released, json };
}

test('a session bills only bracketed audio, once, and ends with session.end after the last final', async () => {
  const { live, transport, settled, released, json } = session();
  live.receive(new Uint8Array(1600), true); // 200 ms outside an utterance: dropped
  json({ event: 'speech_start' });
  live.receive(new Uint8Array(8000), true); // 1 s
  json({ event: 'speech_end' });
  json({ event: 'end' });
  await sleep(10);
  live.closed();
  await sleep(10);
  assert.deepEqual(
    transport.sent.map((e) => e.event),
    ['session.begin', 'transcript.final', 'session.end'],
  );
  assert.equal(transport.sent[1]?.text, '50');
  assert.deepEqual(settled, [1000]);
  assert.equal(transport.sent[2]?.audio_seconds_billed, 1);
  assert.equal(released(), 1);
  assert.deepEqual(transport.closedWith, [1000, 'end']);
});

test('silence ends a session: the open utterance final, the error, then session.end and close 4408', async () => {
  const { transport, settled, json } = session({ silenceTimeoutMs: 30 });
  json({ event: 'speech_start' });
  await sleep(80);
  assert.deepEqual(
    transport.sent.map((e) => e.event ?? e.code),
    ['session.begin', 'transcript.final', 'error', 'session.end'],
  );
  assert.equal(transport.sent[2]?.code, 'silence_timeout');
  assert.deepEqual(transport.closedWith, [4408, 'silence_timeout']);
  assert.deepEqual(settled, [0]);
});

test('the longest session ends at its limit; a lost socket is still billed, once', async () => {
  const timed = session({ maxSessionMs: 30 });
  await sleep(80);
  assert.equal(timed.transport.sent.at(-2)?.code, 'max_duration');
  assert.equal(timed.transport.closedWith?.[0], 4408);

  const lost = session();
  lost.json({ event: 'speech_start' });
  lost.live.receive(new Uint8Array(4000), true);
  lost.live.closed();
  lost.live.closed();
  await sleep(10);
  assert.deepEqual(lost.settled, [500]);
  assert.equal(lost.released(), 1);
  lost.json({ event: 'end' });
  await sleep(10);
  assert.equal(lost.transport.sent.at(-1)?.event, 'session.begin');
});

test('a gateway shutting down ends its sessions billed, with service_unavailable and close 4503', async () => {
  const { live, transport, settled, json } = session();
  json({ event: 'speech_start' });
  live.receive(new Uint8Array(800), true);
  await live.shutdown();
  assert.deepEqual(
    transport.sent.map((e) => e.event),
    ['session.begin', 'transcript.final', 'error', 'session.end'],
  );
  assert.equal(transport.sent[2]?.code, 'service_unavailable');
  assert.deepEqual(transport.closedWith, [4503, 'going_away']);
  assert.deepEqual(settled, [100]);
});

/**
 * TurnTaking with a batch STT, narrowly: the endpointer ends a turn before its words are in, so the turn waits
 * for them; speech that resumes meanwhile is the same turn; words ending in "and" get the longer silence; an STT
 * failure while waiting loses the turn (reported, not dropped in silence); a broken STT stream is reported and
 * turns go on by voice activity; without an STT, turns are taken by voice activity alone (no words, the speech's
 * onset and end as their times); a turn starts at the onset of its first speech; a VAD that fails with no STT
 * leaves nothing to hear the caller.
 * The VAD is a fake that hears speech in any frame that is not silent (20 ms windows), the STT a scripted stream.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventQueue } from '../../engines/stt/event-queue.ts';
import type { SttEvent, SttStream } from '../../engines/stt/types.ts';
import type { VadStream, VoiceActivityDetector } from '../../engines/vad/types.ts';
import type { TurnEnd } from './endpointing.ts';
import { CONTINUATION_FACTOR } from './endpointing.ts';
import { type CallerTurn, LATE_FINAL_WAIT_MS, TurnTaking, UNCONFIRMED_WORDS_WAIT_MS } from './turn-taking.ts';

const ENDPOINTING_MS = 500;

class LoudnessVad implements VoiceActivityDetector {
  readonly name = 'loudness';
  readonly windowSamples = 320;
  createStream(): VadStream {
    return {
      push: async (frame) => [frame.some((s) => s !== 0) ? 1 : 0],
      reset: () => {},
    };
  }
}

/** As LoudnessVad, but the push numbered `failing` (from 0) rejects, as a failed inference run would. */
class FailingVad extends LoudnessVad {
  constructor(private readonly failing: number) {
    super();
  }
  override createStream(): VadStream {
    const inner = super.createStream();
    let pushes = 0;
    return {
      push: (frame) =>
        pushes++ === this.failing ? Promise.reject(new Error('inference failed')) : inner.push(frame),
      reset: () => inner.reset(),
    };
  }
}

/** A VAD whose every inference fails. */
class BrokenVad extends LoudnessVad {
  override createStream(): VadStream {
    return { push: () => Promise.reject(new Error('inference failed')), reset: () => {} };
  }
}

class ScriptedStt implements SttStream {
  readonly events = new EventQueue<SttEvent>();
  flushes = 0;
  /** Samples of each push, in order. */
  readonly pushed: number[] = [];
  push(frame: Int16Array): void {
    this.pushed.push(frame.length);
  }
  flush(): void {
    this.flushes++;
  }
  async end(): Promise<void> {
    this.events.close();
  }
  [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    return this.events[Symbol.asyncIterator]();
  }
}

function setup(
  vad: VoiceActivityDetector = new LoudnessVad(),
  options: { withStt?: boolean; batchStt?: boolean } = {},
) {
  const stt = new ScriptedStt();
  const heard = {
    turns: [] as CallerTurn[],
    lost: [] as TurnEnd[],
    wordless: [] as TurnEnd[],
    recognitionLost: [] as Error[],
    deaf: [] as Error[],
  };
  const listening = new TurnTaking(
    vad,
    options.withStt === false ? null : stt,
    {
      endpointingMs: ENDPOINTING_MS,
      interruptions: { mode: 'normal', adaptive: true, minInterruptMs: 300, minWords: 0 },
      batchStt: options.batchStt ?? true,
    },
    {
      callerTurn: (turn) => heard.turns.push(turn),
      callerTurnLost: (end) => heard.lost.push(end),
      wordlessTurn: (end) => heard.wordless.push(end),
      interruption: () => {},
      transcript: () => {},
      sttError: () => {},
      recognitionLost: (error) => heard.recognitionLost.push(error),
      deaf: (error) => heard.deaf.push(error),
    },
    () => 0,
  );
  let nowMs = 0;
  const frames = async (ms: number, loud: boolean) => {
    for (let t = 0; t < ms; t += 20) {
      nowMs += 20;
      listening.frame(new Int16Array(320).fill(loud ? 1000 : 0), nowMs);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const final = async (text: string, endOfTurn = true) => {
    stt.events.put({ type: 'final', text, endOfTurn });
    await new Promise((resolve) => setImmediate(resolve));
  };
  const partial = async (text: string) => {
    stt.events.put({ type: 'partial', text });
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { stt, heard, frames, final, partial, now: () => nowMs, listening };
}

test('speech that resumes while the words are awaited is the same turn', async () => {
  const t = setup();
  await t.frames(1000, true);
  // 520 ms of silence: the endpointer's 500 ms pass before the VAD can confirm the caller went on.
  await t.frames(520, false);
  assert.equal(t.stt.flushes, 1, 'the STT was asked for the words');
  await t.frames(100, true);
  await t.final('I want to check my order and');
  await t.frames(900, true);
  await t.frames(600, false);
  await t.final('also change my address');
  await t.frames(100, false);
  assert.deepEqual(
    t.heard.turns.map((turn) => turn.text),
    ['I want to check my order and also change my address'],
  );
});

test('a pause shorter than endpointing_ms is not the end, though the VAD confirms the speech after it', async () => {
  const t = setup();
  await t.frames(1000, true);
  // Speech resumes after 300 ms; the VAD confirms it 250 ms later, after the endpointer's 500 ms, and the
  // words of the first part arrive in between.
  await t.frames(300, false);
  await t.frames(220, true);
  await t.final('I want to check my order');
  await t.frames(1000, true);
  await t.frames(600, false);
  await t.final('for last Tuesday.');
  assert.deepEqual(
    t.heard.turns.map((turn) => turn.text),
    ['I want to check my order for last Tuesday.'],
  );
});

test('words ending in "and" hold the turn for the longer silence, then end it', async () => {
  const t = setup();
  await t.frames(1000, true);
  await t.frames(560, false);
  await t.final('I want to check my order and');
  assert.equal(t.heard.turns.length, 0, 'held');
  const holdMs = ENDPOINTING_MS * CONTINUATION_FACTOR;
  await t.frames(holdMs, false);
  assert.equal(t.heard.turns.length, 1);
  const turn = t.heard.turns[0]!;
  assert.equal(turn.reason, 'continuation');
  assert.equal(turn.trailingWord, 'and');
  assert.ok(turn.endpointMs >= holdMs, `${turn.endpointMs} ms of silence`);
});

test('a finished sentence whose words arrive late ends the turn on arrival', async () => {
  const t = setup();
  await t.frames(1000, true);
  await t.frames(600, false);
  await t.final('Where is my order?');
  assert.deepEqual(
    t.heard.turns.map((turn) => [turn.text, turn.reason]),
    [['Where is my order?', 'silence']],
  );
});

test('an STT failure while the words are awaited loses the turn, and says so', async () => {
  const t = setup();
  await t.frames(1000, true);
  await t.frames(600, false);
  t.stt.events.put({ type: 'error', error: new Error('transcription server answered 500') });
  await t.frames(20, false);
  assert.equal(t.heard.lost.length, 1);
  assert.equal(t.heard.turns.length, 0);
});

test('speech without words (a cough) is dropped after the wait, without a turn, and reported as wordless', async () => {
  const t = setup();
  await t.frames(400, true);
  await t.frames(1000, false);
  assert.deepEqual([t.heard.turns.length, t.heard.lost.length, t.heard.wordless.length], [0, 0, 0]);
  await t.frames(LATE_FINAL_WAIT_MS, false);
  assert.deepEqual([t.heard.turns.length, t.heard.lost.length, t.heard.wordless.length], [0, 0, 1]);
});

test('words that come after the turn was given up on still make the turn, unless the caller spoke again', async () => {
  const t = setup();
  await t.frames(400, true);
  await t.frames(1000 + LATE_FINAL_WAIT_MS, false);
  assert.deepEqual([t.heard.turns.length, t.heard.wordless.length], [0, 1]);
  t.stt.events.put({ type: 'final', text: 'where is my order', endOfTurn: true });
  await t.frames(20, false);
  assert.deepEqual(
    t.heard.turns.map((turn) => turn.text),
    ['where is my order'],
  );
});

test('an STT stream that ends while the call is live is reported, and turns go on by voice activity', async () => {
  const t = setup();
  await t.frames(100, false);
  t.stt.events.close();
  await t.frames(20, false);
  assert.equal(t.heard.recognitionLost.length, 1);
  assert.equal(t.listening.recognizesWords, false);
  await t.frames(800, true);
  await t.frames(ENDPOINTING_MS + 300, false);
  assert.deepEqual(
    t.heard.turns.map((turn) => [turn.text, turn.recognized]),
    [['', false]],
  );
});

test('without an STT, each turn is taken by voice activity: no words, the speech onset and end as its times', async () => {
  const t = setup(new LoudnessVad(), { withStt: false });
  await t.frames(400, false);
  await t.frames(1200, true);
  await t.frames(ENDPOINTING_MS + 300, false);
  await t.frames(600, true);
  await t.frames(300, false);
  await t.frames(700, true);
  await t.frames(ENDPOINTING_MS + 300, false);
  assert.deepEqual(
    t.heard.turns.map((turn) => ({
      text: turn.text,
      recognized: turn.recognized,
      start: turn.speechStartMs,
      end: turn.speechEndMs,
    })),
    [
      { text: '', recognized: false, start: 400, end: 1600 },
      // A pause shorter than endpointing_ms: one turn from the first onset to the last end.
      { text: '', recognized: false, start: 2400, end: 4000 },
    ],
  );
  assert.deepEqual([t.heard.wordless.length, t.heard.lost.length], [0, 0]);
});

test('with words, the turn starts at the onset of its first speech, however long it lasted', async () => {
  const t = setup();
  await t.frames(300, false);
  await t.frames(2600, true);
  await t.frames(600, false);
  await t.final('I would like to know where my order is, it was due yesterday.');
  assert.equal(t.heard.turns.length, 1);
  assert.deepEqual([t.heard.turns[0]!.speechStartMs, t.heard.turns[0]!.speechEndMs], [300, 2900]);
  assert.equal(t.heard.turns[0]!.recognized, true);
});

test('the STT given up on: the turn awaiting its words ends at once as unrecognised speech', async () => {
  const t = setup();
  await t.frames(800, true);
  await t.frames(700, false);
  assert.equal(t.heard.turns.length, 0);
  t.listening.stopRecognition(new Error('transcription keeps failing'));
  assert.deepEqual(
    t.heard.turns.map((turn) => [turn.text, turn.recognized, turn.speechStartMs]),
    [['', false, 0]],
  );
  assert.equal(t.heard.recognitionLost.length, 1);
});

test('without an STT, a VAD that keeps failing leaves nothing to hear the caller: reported as deaf, once', async () => {
  const blip = setup(new FailingVad(5), { withStt: false });
  await blip.frames(1200, true);
  assert.equal(blip.heard.deaf.length, 0);
  const broken = setup(new BrokenVad(), { withStt: false });
  await broken.frames(1200, true);
  assert.equal(broken.heard.deaf.length, 1);
});

test('a failed VAD push counts its window as silence: the call goes on, and later times stay right', async () => {
  const t = setup(new FailingVad(20));
  await t.frames(1000, true);
  await t.frames(600, false);
  await t.final('Where is my order?');
  assert.equal(t.heard.turns.length, 1);
  assert.equal(t.heard.turns[0]!.speechEndMs, 1000);
});

test('a streaming STT: words it has not confirmed yet are awaited, so the turn keeps its last words', async () => {
  const t = setup(new LoudnessVad(), { batchStt: false });
  await t.frames(800, true);
  // Final at a pause (a streaming engine's piece), then more speech the STT has only as a partial.
  await t.final('I would like a table.', false);
  await t.frames(600, true);
  await t.partial('for two people');
  await t.frames(ENDPOINTING_MS + 60, false);
  assert.equal(t.heard.turns.length, 0, 'the turn waits for the confirmation of "for two people"');
  assert.equal(t.stt.flushes, 1, 'the STT was asked for it at once');
  await t.final('for two people', false);
  await t.frames(20, false);
  assert.equal(t.heard.turns.length, 1);
  assert.equal(t.heard.turns[0]!.text, 'I would like a table. for two people');
});

test('a streaming STT: a partial that is never confirmed holds the turn only briefly', async () => {
  const t = setup(new LoudnessVad(), { batchStt: false });
  await t.frames(800, true);
  await t.final('Yes, that is right.', false);
  await t.frames(300, true);
  await t.partial('tomorrow');
  await t.frames(ENDPOINTING_MS + 20, false);
  assert.equal(t.heard.turns.length, 0);
  await t.frames(UNCONFIRMED_WORDS_WAIT_MS + 40, false);
  assert.equal(t.heard.turns.length, 1, 'the turn ends with the words it has');
  assert.equal(t.heard.turns[0]!.text, 'Yes, that is right.');
});

test('while the agent talks, a quiet line reaches the STT in chunks and sound at once', async () => {
  const t = setup();
  // Past the prompt hold after any voice: the caller has been quiet for 2 s.
  await t.frames(2000, false);
  t.listening.agentStarted(true);
  t.stt.pushed.length = 0;
  await t.frames(1000, false);
  assert.ok(t.stt.pushed.length <= 11, `1 s of quiet line in ${t.stt.pushed.length} messages`);
  const quietPushes = t.stt.pushed.length;
  await t.frames(20, true);
  const sent = t.stt.pushed.slice(quietPushes).reduce((sum, n) => sum + n, 0);
  const total = t.stt.pushed.reduce((sum, n) => sum + n, 0);
  assert.equal(total, 51 * 320, 'the first frame with sound went at once, with what was gathered before it');
  assert.equal(t.stt.pushed.at(-1), 320);
  assert.ok(sent >= 320);
  // Frame by frame while the caller speaks over the agent, and for a while after the last sound.
  await t.frames(200, true);
  await t.frames(200, false);
  assert.deepEqual(t.stt.pushed.slice(-20), new Array(20).fill(320));
});

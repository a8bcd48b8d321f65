import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatMessage } from '../engines/llm/types.ts';
import { AgentVoice } from './agent-voice.ts';
import { CallTime } from './call-time.ts';
import { Transcript } from './transcript.ts';

/** A carrier that keeps what it was sent, and a voice over it. */
function voiceOnCarrier() {
  const sent: Array<{ kind: 'audio'; samples: number } | { kind: 'mark'; name: string } | { kind: 'clear' }> =
    [];
  const listening = { started: 0, stopped: 0 };
  const voice = new AgentVoice({
    output: {
      sendAudio: (pcm) => sent.push({ kind: 'audio', samples: pcm.length }),
      sendMark: (name) => sent.push({ kind: 'mark', name }),
      clear: () => sent.push({ kind: 'clear' }),
    },
    recorder: undefined,
    time: new CallTime(() => performance.now()),
    history: [] as ChatMessage[],
    transcript: new Transcript(),
    listening: {
      agentStarted: () => listening.started++,
      agentStopped: () => listening.stopped++,
    },
  });
  const marks = () => sent.flatMap((s) => (s.kind === 'mark' ? [s.name] : []));
  return { voice, sent, marks, listening };
}

const ms = (n: number) => new Int16Array(n * 16);

test('a turn that plays out while held by a tentative barge-in does not hold the next turn back', async () => {
  const { voice, sent, marks } = voiceOnCarrier();
  const opening = voice.begin('opening', { interruptible: true, node: undefined });
  voice.sink(opening).audio(opening.id, ms(200), 'Hello there.');
  // The caller starts talking: what is not sent yet is held back. Everything was sent already, so the
  // opening plays out at the carrier and the turn ends while the hold is on.
  voice.pause();
  const finished = voice.finish(opening, false);
  for (const mark of marks()) voice.playbackAck(mark);
  assert.deepEqual(await finished, { ms: 200, text: 'Hello there.' });

  const reply = voice.begin('reply', { interruptible: true, node: undefined });
  const before = sent.length;
  voice.sink(reply).audio(reply.id, ms(100), 'Your order ships today.');
  assert.deepEqual(
    sent.slice(before).map((s) => s.kind),
    ['audio', 'mark'],
    'the reply goes to the carrier at once',
  );
});

test('a hold keeps back what is not sent yet until the episode resumes', () => {
  const { voice, sent } = voiceOnCarrier();
  const reply = voice.begin('reply', { interruptible: true, node: undefined });
  const sink = voice.sink(reply);
  sink.audio(reply.id, ms(100), 'First part.');
  voice.pause();
  sink.audio(reply.id, ms(100), 'Second part.');
  const audioSent = () => sent.filter((s) => s.kind === 'audio').length;
  assert.equal(audioSent(), 1);
  voice.resume();
  assert.equal(audioSent(), 2);
});

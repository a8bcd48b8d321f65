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

test('caller speech over the agent holds nothing back: audio keeps flowing until a stop clears the carrier', () => {
  const { voice, sent, marks, listening } = voiceOnCarrier();
  const reply = voice.begin('reply', { interruptible: true, node: undefined });
  const sink = voice.sink(reply);
  sink.audio(reply.id, ms(200), 'First part of the reply.');
  assert.equal(listening.started, 1);
  for (const mark of marks()) voice.playbackAck(mark);
  sink.audio(reply.id, ms(200), 'Second part.');
  const audioSent = () => sent.filter((s) => s.kind === 'audio').length;
  assert.equal(audioSent(), 2, 'no hold while the interruption is being decided');
  const stopped = voice.stop(true);
  assert.equal(sent.at(-1)?.kind, 'clear', 'a stop flushes what the carrier holds at once');
  assert.deepEqual(stopped?.heard, { ms: 200, text: 'First part of the reply.' });
  assert.equal(listening.stopped, 1);
  sink.audio(reply.id, ms(100), 'Late audio of the stopped turn.');
  assert.equal(audioSent(), 2, "a stopped turn's late audio never reaches the carrier");
});

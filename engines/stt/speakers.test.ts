/**
 * Telling two speakers apart in a mono recording (speakers.ts), on turns of two eSpeak NG voices: a male
 * (`en-us`) and a female variant (`en-us+f3`). The accuracy is the share of turns given the right speaker
 * (labels matched up to which is called speaker_1, which is whoever speaks first). One voice alone is one speaker.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { separateSpeakers } from './speakers.ts';
import { concat, espeak, espeakInstalled, silence } from './testing/speech.ts';

const LINES = [
  'hello, thank you for calling the clinic',
  'hi, i would like to book an appointment',
  'sure, which day suits you',
  'monday morning if possible',
  'we have ten thirty free on monday',
  'that works, please book it',
  'done, anything else i can help with',
  'no, that is all, thank you',
];

/** Turns alternating between two voices, with 700 ms of silence between; their [start, end] ms. */
function dialogue(voices: [string, string]) {
  const parts: Int16Array[] = [];
  const turns: Array<[number, number]> = [];
  const truth: number[] = [];
  let at = 0;
  for (const [i, line] of LINES.entries()) {
    const speech = espeak(line, { voice: voices[i % 2]! });
    parts.push(speech, silence(700));
    turns.push([(at * 1000) / 16000, ((at + speech.length) * 1000) / 16000]);
    truth.push(i % 2);
    at += speech.length + 11_200;
  }
  return { audio: concat(...parts), turns, truth };
}

describe('mono speaker separation', { skip: !espeakInstalled() && 'espeak-ng is not installed' }, () => {
  test('two eSpeak NG voices (male and female) are told apart turn by turn', () => {
    const { audio, turns, truth } = dialogue(['en-us', 'en-us+f3']);
    const result = separateSpeakers(audio, 16000, turns);
    assert.equal(result.separated, true);
    const right = result.labels.filter((l, i) => l === truth[i]).length;
    const accuracy = right / truth.length;
    console.log(`speaker separation: ${right}/${truth.length} turns right (${(accuracy * 100).toFixed(0)}%)`);
    assert.ok(accuracy >= 0.875, `accuracy ${accuracy}`);
  });

  test('the same two voices at 8 kHz (a phone line) are told apart too', () => {
    const { audio, turns, truth } = dialogue(['en-us', 'en-us+f3']);
    const narrow = new Int16Array(audio.length / 2);
    for (let n = 0; n < narrow.length; n++) narrow[n] = (audio[2 * n]! + audio[2 * n + 1]!) >> 1;
    const result = separateSpeakers(narrow, 8000, turns);
    assert.equal(result.separated, true);
    const right = result.labels.filter((l, i) => l === truth[i]).length;
    console.log(`speaker separation at 8 kHz: ${right}/${truth.length} turns right`);
    assert.ok(right / truth.length >= 0.875);
  });

  test('one voice throughout is one speaker', () => {
    const { audio, turns } = dialogue(['en-us', 'en-us']);
    const result = separateSpeakers(audio, 16000, turns);
    assert.equal(result.separated, false);
    assert.ok(result.labels.every((l) => l === 0));
  });

  test('fewer than two turns is one speaker', () => {
    assert.deepEqual(separateSpeakers(new Int16Array(16000), 16000, [[0, 1000]]), {
      separated: false,
      labels: [0],
    });
  });
});

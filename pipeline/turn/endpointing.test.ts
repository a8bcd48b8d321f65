/**
 * Endpointer, table-driven: scripts of caller speech (VAD), transcripts and time, and the turn ends they
 * must produce, as "reason:endpointMs@ms".
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Endpointer, holdMs, SENTENCE_END_FACTOR, type TurnEnd } from './endpointing.ts';
import { playEndpointer } from './testing/play.ts';
import { final, partial, type Step, speechEnd, speechStart, tick, voicedWindows } from './testing/script.ts';

const brief = (events: TurnEnd[]): string[] => events.map((e) => `${e.reason}:${e.endpointMs}@${e.atMs}`);

/** Ticks every 20 ms (one audio frame) over [fromMs, toMs]. */
function frames(fromMs: number, toMs: number): Step[] {
  const steps: Step[] = [];
  for (let t = fromMs; t <= toMs; t += 20) steps.push(tick(t));
  return steps;
}

interface Case {
  name: string;
  endpointingMs?: number;
  steps: Step[];
  expect: string[];
}

const cases: Case[] = [
  {
    name: 'plain silence: the turn ends endpointing_ms after the speech ended',
    steps: [speechStart(0), partial(800, 'I would like to book'), speechEnd(2000), ...frames(2000, 3000)],
    expect: ['silence:500@2500'],
  },
  {
    name: 'sentence end shortens the wait (40%)',
    steps: [speechStart(0), final(1900, 'I want to book a table.'), speechEnd(2000), ...frames(2000, 3000)],
    expect: ['sentence_end:200@2200'],
  },
  {
    name: 'a question mark, and the Hindi danda, end sentences too',
    steps: [
      speechStart(0),
      final(1900, 'क्या आप मेरी मदद कर सकते हैं?'),
      speechEnd(2000),
      ...frames(2000, 3000),
      speechStart(4000),
      final(5900, 'मुझे कल की टिकट चाहिए।'),
      speechEnd(6000),
      ...frames(6000, 7000),
    ],
    expect: ['sentence_end:200@2200', 'sentence_end:200@6200'],
  },
  {
    name: 'trailing "aur" lengthens the wait (to 1.3 s)',
    steps: [
      speechStart(0),
      final(1900, 'mujhe do ticket chahiye aur'),
      speechEnd(2000),
      ...frames(2000, 3500),
    ],
    expect: ['continuation:1300@3300'],
  },
  {
    name: 'trailing Devanagari "और" and filler "umm" too; a conjunction wins over a full stop',
    steps: [
      speechStart(0),
      partial(1900, 'मैं दिल्ली से हूँ और'),
      speechEnd(2000),
      ...frames(2000, 3500),
      speechStart(4000),
      final(5900, 'I need, umm'),
      speechEnd(6000),
      ...frames(6000, 7500),
      speechStart(8000),
      final(9900, 'Two tickets and.'),
      speechEnd(10000),
      ...frames(10000, 11500),
    ],
    expect: ['continuation:1300@3300', 'continuation:1300@7300', 'continuation:1300@11300'],
  },
  {
    name: 'the caller goes on after "so": the silence is cancelled, the turn ends after the next one',
    steps: [
      speechStart(0),
      partial(1900, 'so'),
      speechEnd(2000),
      ...frames(2000, 5000),
      speechStart(2900), // known at 3150, before the 1300 ms the trailing "so" asks for
      partial(3800, 'so I need two seats'),
      speechEnd(4000),
    ],
    expect: ['silence:500@4500'],
  },
  {
    name: 'an STT commit is evidence, not a verdict: words with no cue wait the shorter silence, from the speech end',
    steps: [speechStart(0), speechEnd(2000), final(2150, 'yes please', true), ...frames(2160, 3000)],
    expect: ['sentence_end:200@2200'],
  },
  {
    name: 'the same words in a final that is no commit wait endpointing_ms',
    steps: [speechStart(0), speechEnd(2000), final(2150, 'yes please'), ...frames(2160, 3000)],
    expect: ['silence:500@2500'],
  },
  {
    name: 'an STT commit of a finished sentence: the shorter silence, counted from the speech end',
    steps: [speechStart(0), speechEnd(2000), final(2150, 'Yes, please.', true), ...frames(2160, 3000)],
    expect: ['sentence_end:200@2200'],
  },
  {
    name: 'STT commit of a text ending in "so" does not end the turn; the caller going on continues it',
    steps: [
      speechStart(0),
      partial(1200, 'a table for two'),
      speechEnd(2000),
      final(2300, 'I would like to book a table for two so', true),
      ...frames(2300, 2800),
      speechStart(2800), // an 800 ms pause, known at 3050
      ...frames(2820, 4000),
      speechEnd(4000),
      final(4300, 'around eight tonight.', true),
      ...frames(4300, 6000),
    ],
    expect: ['sentence_end:300@4300'],
  },
  {
    name: 'STT commit of "aur", an incomplete clause, a filler: the longer silence, counted from the speech end',
    steps: [
      speechStart(0),
      speechEnd(2000),
      final(2300, 'mujhe do logon ke liye table chahiye aur', true),
      ...frames(2300, 3400),
      speechStart(4000),
      speechEnd(5000),
      final(5300, 'I want to book a table for', true),
      ...frames(5300, 6400),
      speechStart(7000),
      speechEnd(8000),
      final(8300, 'મારે બે ટિકિટ જોઈએ છે અને', true),
      ...frames(8300, 9400),
    ],
    expect: ['continuation:1300@3300', 'continuation:1300@6300', 'continuation:1300@9300'],
  },
  {
    name: 'STT commit of "and" the VAD did not hear: the silence counts from the commit',
    steps: [final(1500, 'two tickets and', true), ...frames(1500, 3000)],
    expect: ['continuation:1300@2800'],
  },
  {
    name: 'UtteranceEnd-style commit long after a held "umm" still waits out the bound, no longer',
    steps: [
      speechStart(0),
      speechEnd(1000),
      final(1200, 'umm', true),
      ...frames(1200, 2400),
      final(2000, 'umm', true),
    ],
    expect: ['continuation:1300@2300'],
  },
  {
    name: 'STT commit while the VAD still hears speech: the VAD says where the silence began',
    steps: [
      speechStart(0),
      final(1500, 'yes please', true),
      ...frames(1500, 1800),
      ...voicedWindows(1500, 1800),
      speechEnd(1800),
      ...frames(1900, 3000),
    ],
    expect: ['silence:500@2300'],
  },
  {
    name: 'STT commit the VAD never confirms: counted from the commit',
    steps: [speechStart(0), final(1500, 'Yes, please.', true), ...frames(1500, 2000)],
    expect: ['sentence_end:200@1700'],
  },
  {
    name: 'new words after a commit the VAD never confirmed: the caller went on',
    steps: [
      speechStart(0),
      final(1500, 'I want', true),
      ...frames(1500, 1700),
      ...voicedWindows(1600, 1700),
      partial(1700, 'to book a table'),
      ...frames(1700, 2400),
      speechEnd(2400),
      final(2450, 'to book a table.', true),
      ...frames(2450, 3000),
    ],
    expect: ['sentence_end:210@2610'],
  },
  {
    name: 'voice after a commit the VAD never confirmed: the caller went on, the VAD ends the turn',
    steps: [
      speechStart(0),
      final(1500, 'Yes.', true),
      ...frames(1500, 1600),
      ...voicedWindows(1600, 1700),
      ...frames(1600, 2400),
      speechEnd(2400),
      ...frames(2400, 3000),
    ],
    expect: ['sentence_end:200@2600'],
  },
  {
    name: 'STT commit of speech the VAD missed (quiet caller) still ends the turn',
    steps: [final(1500, 'haan', true), ...frames(1500, 2500)],
    expect: ['sentence_end:200@1700'],
  },
  {
    name: 'no speech: neither time nor an empty commit ends a turn',
    steps: [...frames(0, 5000), final(3000, '', true), partial(3100, '')],
    expect: [],
  },
  {
    name: 'a late final after the turn ended belongs to it: no second turn end',
    steps: [
      speechStart(0),
      speechEnd(2000),
      ...frames(2000, 2600),
      final(2700, 'I want to book a table.', true),
      ...frames(2620, 4000),
    ],
    expect: ['silence:500@2500'],
  },
  {
    name: 'endpointing 0: the turn ends as soon as the VAD reports the silence',
    endpointingMs: 0,
    steps: [speechStart(0), speechEnd(2000)],
    expect: ['silence:100@2100'],
  },
  {
    name: 'a short endpoint already elapsed when the VAD tells: ends on the VAD event',
    endpointingMs: 60,
    steps: [speechStart(0), partial(1500, 'Done.'), speechEnd(2000)],
    expect: ['sentence_end:100@2100'],
  },
  {
    name: 'a sentence end that arrives during the silence can end the turn on arrival',
    steps: [
      speechStart(0),
      speechEnd(2000),
      ...frames(2000, 2300),
      final(2350, 'That is all.'),
      ...frames(2360, 3000),
    ],
    expect: ['sentence_end:350@2350'],
  },
  {
    name: 'two turns in a row',
    steps: [
      speechStart(0),
      speechEnd(1000),
      ...frames(1000, 2000),
      speechStart(3000),
      final(3900, 'Okay.'),
      speechEnd(4000),
      ...frames(4000, 5000),
    ],
    expect: ['silence:500@1500', 'sentence_end:200@4200'],
  },
];

describe('Endpointer', () => {
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(brief(playEndpointer(c.endpointingMs ?? 500, c.steps)), c.expect);
    });
  }

  test('turn ends carry the transcript, the rule and the trailing word', () => {
    const [end] = playEndpointer(500, [
      speechStart(0),
      final(1000, 'mujhe do ticket chahiye'),
      partial(1900, 'matlab'),
      speechEnd(2000),
      tick(3300),
    ]);
    assert.deepEqual(end, {
      type: 'turn_end',
      reason: 'continuation',
      atMs: 3300,
      endpointMs: 1300,
      requiredMs: holdMs(500),
      transcript: 'mujhe do ticket chahiye matlab',
      trailingWord: 'matlab',
    });
  });

  test('nextDeadlineMs follows the transcript', () => {
    const e = new Endpointer({ endpointingMs: 500 });
    assert.equal(e.nextDeadlineMs(), null);
    e.onVad({ type: 'speech_start', atMs: 0, decidedAtMs: 250 });
    assert.equal(e.nextDeadlineMs(), null);
    e.onVad({ type: 'speech_end', atMs: 2000, startMs: 0, decidedAtMs: 2100 });
    assert.equal(e.nextDeadlineMs(), 2500);
    e.onTranscript({ type: 'partial', text: 'Thank you.' }, 2150);
    assert.equal(e.nextDeadlineMs(), 2000 + 500 * SENTENCE_END_FACTOR);
    e.onTranscript({ type: 'partial', text: 'Thank you and' }, 2200);
    assert.equal(e.nextDeadlineMs(), 2000 + holdMs(500));
  });

  test('rejects a negative endpointing_ms', () => {
    assert.throws(() => new Endpointer({ endpointingMs: -1 }), RangeError);
  });
});

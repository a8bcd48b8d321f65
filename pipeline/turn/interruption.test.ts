/**
 * InterruptionPolicy, table-driven: each case is a script of caller speech (VAD), transcripts, agent replies
 * and time, and the decisions it must produce, as "type:reason@ms".
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_BEHAVIOR } from '../../core/agents/types.ts';
import {
  FALSE_INTERRUPTION_TIMEOUT_MS,
  type InterruptionEvent,
  InterruptionPolicy,
  type InterruptionSettings,
  interruptionSettings,
} from './interruption.ts';
import { playInterruption } from './testing/play.ts';
import {
  agentStart,
  agentStop,
  final,
  partial,
  type Step,
  speechEnd,
  speechStart,
  tick,
  turnTaken,
  voicedWindows,
} from './testing/script.ts';

const DEFAULTS = interruptionSettings(DEFAULT_BEHAVIOR);

const brief = (events: InterruptionEvent[]): string[] => events.map((e) => `${e.type}:${e.reason}@${e.atMs}`);

interface Case {
  name: string;
  settings?: Partial<InterruptionSettings>;
  steps: Step[];
  expect: string[];
}

const cases: Case[] = [
  {
    name: "the reply to a committed turn is not talked over by that turn's speech the VAD has not closed yet",
    steps: [
      speechStart(1000),
      turnTaken(2600),
      agentStart(3000),
      speechEnd(3100),
      tick(6000),
      speechStart(7000),
    ],
    expect: ['heard:caller_speech@7250'],
  },
  {
    name: 'speech still open when a reply starts, with no turn taken, opens an episode at once',
    steps: [speechStart(1000), agentStart(3000), speechEnd(3200)],
    expect: ['heard:caller_speech@3000'],
  },
  {
    name: 'short backchannel "haan" while the agent speaks: pause, then resume',
    steps: [agentStart(0), speechStart(1000), partial(1350, 'haan'), speechEnd(1300), final(1500, 'Haan.')],
    expect: ['heard:caller_speech@1250', 'ignored_backchannel:backchannel@1500', 'resumed:backchannel@1500'],
  },
  {
    name: 'long backchannel (1.4 s of "haan haan theek hai ji") does not interrupt when adaptive',
    // Decided when the caller stops (2500): the final is in by then.
    steps: [
      agentStart(0),
      speechStart(1000),
      partial(1500, 'haan haan'),
      partial(2000, 'haan haan theek hai'),
      speechEnd(2400),
      final(2450, 'haan haan theek hai ji'),
    ],
    expect: ['heard:caller_speech@1250', 'ignored_backchannel:backchannel@2500', 'resumed:backchannel@2500'],
  },
  {
    name: 'the same backchannel interrupts when not adaptive (duration confirmed by words)',
    settings: { adaptive: false },
    steps: [agentStart(0), speechStart(1000), partial(1350, 'haan'), speechEnd(1400), final(1500, 'haan')],
    expect: ['heard:caller_speech@1250', 'interrupted:min_duration@1350'],
  },
  {
    name: 'backchannels in Devanagari and Gujarati are backchannels too',
    steps: [
      agentStart(0),
      speechStart(1000),
      speechEnd(1400),
      final(1600, 'हाँ जी, ठीक है'),
      speechStart(3000),
      speechEnd(3400),
      final(3600, 'હા, બરાબર છે'),
    ],
    expect: [
      'heard:caller_speech@1250',
      'ignored_backchannel:backchannel@1600',
      'resumed:backchannel@1600',
      'heard:caller_speech@3250',
      'ignored_backchannel:backchannel@3600',
      'resumed:backchannel@3600',
    ],
  },
  {
    name: 'a Hindi stop word interrupts at once, before any threshold (mode low)',
    settings: { mode: 'low' },
    steps: [agentStart(0), speechStart(1000), partial(1300, 'रुको')],
    expect: ['heard:caller_speech@1250', 'interrupted:stop_phrase@1300'],
  },
  {
    name: 'a stop phrase after a backchannel interrupts ("haan, ek minute")',
    steps: [agentStart(0), speechStart(1000), partial(1300, 'haan'), partial(1400, 'haan ek minute')],
    expect: ['heard:caller_speech@1250', 'interrupted:stop_phrase@1400'],
  },
  {
    name: 'Gujarati "ના" (no) is a stop word',
    steps: [agentStart(0), speechStart(1000), speechEnd(1260), final(1400, 'ના')],
    expect: ['heard:caller_speech@1250', 'interrupted:stop_phrase@1400'],
  },
  {
    name: 'false interruption: a cough with no words resumes 1.5 s after it began',
    steps: [agentStart(0), speechStart(1000), speechEnd(1350), tick(2499), tick(2500)],
    expect: ['heard:caller_speech@1250', 'resumed:false_interruption@2500'],
  },
  {
    name: 'sustained speech with no words yet (batch STT) interrupts at the deadline',
    steps: [agentStart(0), speechStart(1000), tick(2000), tick(2500)],
    expect: ['heard:caller_speech@1250', 'interrupted:sustained_speech@2500'],
  },
  {
    name: 'voice with no words yet interrupts once it outlasts a backchannel (650 ms), not at the deadline',
    steps: [agentStart(0), speechStart(1000), ...voicedWindows(1000, 1800)],
    expect: ['heard:caller_speech@1250', 'interrupted:sustained_speech@1672'],
  },
  {
    name: 'a 450 ms "okay" whose word comes after the VAD hangover: the agent talks on, nothing interrupts',
    steps: [
      agentStart(0),
      speechStart(1000),
      ...voicedWindows(1000, 1450),
      speechEnd(1450),
      partial(1600, 'Okay.'),
      final(1700, 'Okay.'),
    ],
    expect: ['heard:caller_speech@1250', 'ignored_backchannel:backchannel@1700', 'resumed:backchannel@1700'],
  },
  {
    name: 'without adaptive interruptions any voice of min_interrupt_ms interrupts, words or not',
    settings: { adaptive: false },
    steps: [agentStart(0), speechStart(1000), ...voicedWindows(1000, 1400)],
    expect: ['heard:caller_speech@1250', 'interrupted:sustained_speech@1320'],
  },
  {
    name: '"okay" and then more voice with no new words yet: past twice a backchannel it interrupts',
    steps: [agentStart(0), speechStart(1000), partial(1500, 'okay'), ...voicedWindows(1000, 2400)],
    expect: ['heard:caller_speech@1250', 'interrupted:sustained_speech@2312'],
  },
  {
    name: 'mode normal: 400 ms of real words interrupt as soon as words confirm them',
    steps: [agentStart(0), speechStart(1000), partial(1400, 'what about')],
    expect: ['heard:caller_speech@1250', 'interrupted:min_duration@1400'],
  },
  {
    name: 'mode low (600 ms): the same words wait until the caller has spoken 600 ms',
    settings: { mode: 'low' },
    steps: [agentStart(0), speechStart(1000), partial(1400, 'what about'), tick(1599), tick(1600)],
    expect: ['heard:caller_speech@1250', 'interrupted:min_duration@1600'],
  },
  {
    name: 'mode normal: a 260 ms "what" stays below the threshold and the reply resumes',
    steps: [agentStart(0), speechStart(1000), speechEnd(1260), final(1450, 'What?')],
    expect: ['heard:caller_speech@1250', 'resumed:below_threshold@1450'],
  },
  {
    name: 'mode high (150 ms): the same 260 ms "what" interrupts',
    settings: { mode: 'high' },
    steps: [agentStart(0), speechStart(1000), speechEnd(1260), final(1450, 'What?')],
    expect: ['heard:caller_speech@1250', 'interrupted:min_duration@1450'],
  },
  {
    name: 'mode off: never pauses nor interrupts, even on "stop"',
    settings: { mode: 'off' },
    steps: [agentStart(0), speechStart(1000), partial(1300, 'stop stop'), speechEnd(2000), tick(4000)],
    expect: ['ignored:interruptions_off@1250'],
  },
  {
    name: 'a node with allow_interrupt false: never pauses nor interrupts',
    steps: [agentStart(0, false), speechStart(1000), partial(1300, 'wait, listen to me'), speechEnd(2500)],
    expect: ['ignored:not_interruptible@1250'],
  },
  {
    name: 'min_words 3: three words interrupt even in a short utterance',
    settings: { minWords: 3 },
    steps: [agentStart(0), speechStart(1000), speechEnd(1260), final(1400, 'tell me more')],
    expect: ['heard:caller_speech@1250', 'interrupted:min_words@1400'],
  },
  {
    name: 'min_words 3: four backchannel words do not interrupt when adaptive',
    settings: { minWords: 3 },
    steps: [agentStart(0), speechStart(1000), speechEnd(1260), final(1400, 'haan haan theek hai')],
    expect: ['heard:caller_speech@1250', 'ignored_backchannel:backchannel@1400', 'resumed:backchannel@1400'],
  },
  {
    name: 'a backchannel followed by a real request interrupts ("haan, but listen")',
    steps: [agentStart(0), speechStart(1000), partial(1300, 'haan'), partial(1500, 'haan but listen')],
    expect: ['heard:caller_speech@1250', 'interrupted:min_duration@1500'],
  },
  {
    name: 'the reply ends by itself during an episode',
    steps: [agentStart(0), speechStart(1000), agentStop(1300)],
    expect: ['heard:caller_speech@1250', 'ignored:agent_finished@1300'],
  },
  {
    name: 'caller already talking when the reply starts: paused at once, speech counted from the reply',
    steps: [speechStart(1000), agentStart(1500), partial(1700, 'no no'), speechEnd(2000)],
    expect: ['heard:caller_speech@1500', 'interrupted:stop_phrase@1700'],
  },
  {
    name: 'no agent speech: caller speech is the turn, not an interruption',
    steps: [speechStart(1000), partial(1300, 'stop'), speechEnd(2000), tick(5000)],
    expect: [],
  },
  {
    name: 'after an interruption nothing more until the next reply',
    steps: [
      agentStart(0),
      speechStart(1000),
      partial(1300, 'wait'),
      speechEnd(1500),
      speechStart(1800),
      agentStop(1900),
      speechEnd(2500),
      agentStart(3000),
      speechStart(4000),
    ],
    expect: ['heard:caller_speech@1250', 'interrupted:stop_phrase@1300', 'heard:caller_speech@4250'],
  },
  {
    name: 'words before a late VAD: the episode opens with them and interrupts at once',
    // The VAD is 400 ms behind: it confirms speech begun at 1000 only at 1650; the STT named a word at 1450.
    steps: [agentStart(0), speechStart(1000, 650), partial(1450, 'actually'), partial(1600, 'actually I')],
    expect: ['heard:caller_speech@1650', 'interrupted:min_duration@1650'],
  },
  {
    name: 'a stop word before a late VAD interrupts when the VAD confirms the speech',
    steps: [agentStart(0), speechStart(1000, 650), partial(1450, 'wait')],
    expect: ['heard:caller_speech@1650', 'interrupted:stop_phrase@1650'],
  },
  {
    name: 'a backchannel before a late VAD stays a backchannel',
    steps: [
      agentStart(0),
      speechStart(1000, 650),
      partial(1450, 'haan'),
      speechEnd(1560),
      final(1700, 'Haan.'),
    ],
    expect: ['heard:caller_speech@1650', 'ignored_backchannel:backchannel@1700', 'resumed:backchannel@1700'],
  },
  {
    name: 'a backchannel whose final came before a late VAD resumes as soon as the caller is quiet',
    steps: [
      agentStart(0),
      speechStart(1000, 700),
      partial(1450, 'haan'),
      final(1600, 'Haan.'),
      speechEnd(1600),
    ],
    expect: ['heard:caller_speech@1700', 'ignored_backchannel:backchannel@1700', 'resumed:backchannel@1700'],
  },
  {
    name: 'interim words from before the speech began (the previous utterance) are not its words',
    steps: [agentStart(0), partial(900, 'what about'), speechStart(1000), speechEnd(1200), tick(2500)],
    expect: ['heard:caller_speech@1250', 'resumed:false_interruption@2500'],
  },
  {
    name: "words before the reply began are the previous turn's, not an interruption of it",
    steps: [
      partial(900, 'I want to book'),
      agentStart(1000),
      speechStart(950, 350),
      speechEnd(1400),
      tick(2450),
    ],
    expect: ['heard:caller_speech@1300', 'resumed:false_interruption@2450'],
  },
  {
    name: 'mode high: voice with no words interrupts after half a backchannel (325 ms)',
    settings: { mode: 'high' },
    steps: [agentStart(0), speechStart(1000), ...voicedWindows(1000, 1500)],
    expect: ['heard:caller_speech@1250', 'interrupted:sustained_speech@1352'],
  },
  {
    name: 'mode low: voice with no words waits out twice a backchannel (1.3 s)',
    settings: { mode: 'low' },
    steps: [agentStart(0), speechStart(1000), ...voicedWindows(1000, 2400)],
    expect: ['heard:caller_speech@1250', 'interrupted:sustained_speech@2312'],
  },
  {
    name: 'speech resuming within an episode adds up ("uh" ... "so the thing is")',
    steps: [
      agentStart(0),
      speechStart(1000),
      speechEnd(1260),
      speechStart(1400),
      partial(1700, 'so the thing'),
    ],
    expect: ['heard:caller_speech@1250', 'interrupted:min_duration@1700'],
  },
];

describe('InterruptionPolicy', () => {
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(brief(playInterruption({ ...DEFAULTS, ...c.settings }, c.steps)), c.expect);
    });
  }

  test('events carry their evidence: speech duration, words, stop phrase, threshold', () => {
    const events = playInterruption({ ...DEFAULTS, mode: 'low' }, [
      agentStart(0),
      speechStart(1000),
      partial(1400, 'Haan, RUKO!'),
    ]);
    const interrupted = events.find((e) => e.type === 'interrupted');
    assert.deepEqual(interrupted?.evidence, {
      speechMs: 400,
      words: ['haan', 'ruko'],
      text: 'Haan, RUKO!',
      thresholdMs: 600,
      stopPhrase: 'ruko',
    });
    assert.ok(events.every((e) => e.episode === 1));
  });

  test('thresholds by mode, from the agent behavior', () => {
    const threshold = (mode: InterruptionSettings['mode']): number | null =>
      new InterruptionPolicy({ ...DEFAULTS, mode }).thresholdMs;
    assert.deepEqual(
      [threshold('off'), threshold('low'), threshold('normal'), threshold('high')],
      [null, 600, 300, 150],
    );
  });

  test('nextDeadlineMs: the false-interruption deadline, or the threshold crossing when earlier', () => {
    const policy = new InterruptionPolicy({ ...DEFAULTS, mode: 'low' });
    policy.agentStarted(0);
    assert.equal(policy.nextDeadlineMs(), null);
    policy.onVad({ type: 'speech_start', atMs: 1000, decidedAtMs: 1250 });
    assert.equal(policy.nextDeadlineMs(), 1600);
    policy.onVad({ type: 'speech_end', atMs: 1300, startMs: 1000, decidedAtMs: 1400 });
    assert.equal(policy.nextDeadlineMs(), 1000 + FALSE_INTERRUPTION_TIMEOUT_MS);
  });
});

/**
 * Properties of turn-taking over random conversations (fast-check): caller speech toggling as a VAD reports
 * it, transcripts from a mixed English/Hindi/Gujarati vocabulary, agent replies starting and stopping, time
 * passing. The interruption policy never both interrupts and resumes one episode, resolves every pause, and
 * does nothing when disabled; the endpointer never ends a turn before speech, nor during it on silence rules.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { INTERRUPTION_MODES } from '../../core/agents/types.ts';
import { holdMs, SENTENCE_END_FACTOR } from './endpointing.ts';
import {
  BACKCHANNEL_MAX_MS,
  FALSE_INTERRUPTION_TIMEOUT_MS,
  type InterruptionEvent,
  MODE_FACTORS,
  sustainedSpeechMs,
} from './interruption.ts';
import { playEndpointer, playInterruption } from './testing/play.ts';
import {
  agentStart,
  agentStop,
  END_DECISION_MS,
  final,
  partial,
  START_DECISION_MS,
  type Step,
  speechEnd,
  speechStart,
  tick,
  voicedWindows,
} from './testing/script.ts';

const VOCABULARY = [
  '',
  'haan',
  'Haan ji.',
  'ok',
  'हाँ जी',
  'ठीक है',
  'હા',
  'stop',
  'ruko',
  'रुको',
  'ek minute',
  'no',
  'what about the price',
  'and',
  'I want to book.',
  'umm',
  'matlab',
  'theek hai aur',
  'hello there?',
];

type Op =
  | { op: 'toggle'; gap: number }
  | { op: 'partial' | 'final' | 'commit'; gap: number; text: string }
  | { op: 'agent_start'; gap: number; interruptible: boolean }
  | { op: 'agent_stop' | 'tick'; gap: number };

const gap = fc.integer({ min: 0, max: 900 });
const text = fc.constantFrom(...VOCABULARY);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('toggle' as const), gap }),
  fc.record({ op: fc.constantFrom('partial' as const, 'final' as const, 'commit' as const), gap, text }),
  fc.record({ op: fc.constant('agent_start' as const), gap, interruptible: fc.boolean() }),
  fc.record({ op: fc.constantFrom('agent_stop' as const, 'tick' as const), gap }),
);

/** A consistent script: VAD starts and ends alternate and are decided in time order, as the segmenter does. */
function script(ops: readonly Op[]): { steps: Step[]; endMs: number; speaking: boolean } {
  const steps: Step[] = [];
  let now = 0;
  let speaking = false;
  for (const o of ops) {
    now += o.gap;
    if (o.op === 'toggle') {
      const atMs = now;
      steps.push(speaking ? speechEnd(atMs) : speechStart(atMs));
      now = atMs + (speaking ? END_DECISION_MS : START_DECISION_MS);
      speaking = !speaking;
    } else if (o.op === 'partial') steps.push(partial(now, o.text));
    else if (o.op === 'final' || o.op === 'commit') steps.push(final(now, o.text, o.op === 'commit'));
    else if (o.op === 'agent_start') steps.push(agentStart(now, o.interruptible));
    else if (o.op === 'agent_stop') steps.push(agentStop(now));
    else steps.push(tick(now));
  }
  return { steps, endMs: now, speaking };
}

const TERMINAL = new Set(['interrupted', 'resumed', 'ignored']);

function byEpisode(events: InterruptionEvent[]): Map<number, InterruptionEvent[]> {
  const map = new Map<number, InterruptionEvent[]>();
  for (const e of events) map.set(e.episode, [...(map.get(e.episode) ?? []), e]);
  return map;
}

describe('InterruptionPolicy properties', () => {
  const settingsArb = fc.record({
    mode: fc.constantFrom(...INTERRUPTION_MODES),
    adaptive: fc.boolean(),
    minInterruptMs: fc.integer({ min: 0, max: 2000 }),
    minWords: fc.integer({ min: 0, max: 4 }),
  });

  test('one outcome per episode, never both interrupted and resumed; every pause is resolved', () => {
    fc.assert(
      fc.property(settingsArb, fc.array(opArb, { maxLength: 60 }), (settings, ops) => {
        const { steps, endMs, speaking } = script(ops);
        // Let the caller stop, time run out, and the reply end: every open episode must then be decided.
        const tail = [
          ...(speaking ? [speechEnd(endMs)] : []),
          tick(endMs + 10_000),
          agentStop(endMs + 10_001),
        ];
        const events = playInterruption(settings, [...steps, ...tail]);
        let last = 0;
        for (const e of events) {
          assert.ok(e.atMs >= last, 'time never goes back');
          last = e.atMs;
        }
        for (const [, episode] of byEpisode(events)) {
          const types = episode.map((e) => e.type);
          assert.ok(!(types.includes('interrupted') && types.includes('resumed')), types.join(','));
          assert.equal(types.filter((t) => TERMINAL.has(t)).length, 1, `one outcome: ${types.join(',')}`);
          if (types[0] === 'heard') {
            assert.ok(TERMINAL.has(types[types.length - 1]!), `resolved: ${types.join(',')}`);
            if (types.includes('ignored_backchannel'))
              assert.deepEqual(types.slice(-2), ['ignored_backchannel', 'resumed']);
          } else {
            assert.deepEqual(types, ['ignored'], 'an episode that heard nothing is only ignored');
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  test('disabled (mode off, or a reply that is not interruptible): never pauses, never interrupts', () => {
    fc.assert(
      fc.property(settingsArb, fc.array(opArb, { maxLength: 60 }), fc.boolean(), (settings, ops, off) => {
        let steps = script(ops).steps;
        if (off) settings.mode = 'off';
        else steps = steps.map((s) => (s.kind === 'agent_start' ? { ...s, interruptible: false } : s));
        for (const e of playInterruption(settings, steps)) {
          assert.equal(e.type, 'ignored');
          assert.ok(['interruptions_off', 'not_interruptible'].includes(e.reason), e.reason);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('words the STT gives before a late VAD confirms the speech stop the agent when it does', () => {
    const requests = ['what about the price', 'actually I need', 'मुझे कुछ और', 'mujhe delivery date'];
    fc.assert(
      fc.property(
        fc.integer({ min: 50, max: 1500 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.constantFrom(...requests),
        (lagMs, wordFraction, text) => {
          const decidedAtMs = 1000 + START_DECISION_MS + lagMs;
          // Received after the speech began, before the VAD told.
          const wordAtMs = 1000 + Math.floor(((decidedAtMs - 1000) * wordFraction) / 1000);
          const settings = { mode: 'normal' as const, adaptive: true, minInterruptMs: 300, minWords: 0 };
          const events = playInterruption(settings, [
            agentStart(0),
            partial(wordAtMs, text),
            speechStart(1000, START_DECISION_MS + lagMs),
          ]);
          assert.deepEqual(
            events.map((e) => `${e.type}:${e.reason}@${e.atMs}`),
            [`heard:caller_speech@${decidedAtMs}`, `interrupted:min_duration@${decidedAtMs}`],
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  test('voice with no words interrupts at a backchannel length scaled by the mode, never below the threshold', () => {
    fc.assert(
      fc.property(settingsArb, (settings) => {
        const limit = sustainedSpeechMs(settings);
        const events = playInterruption(settings, [
          agentStart(0),
          speechStart(1000),
          ...voicedWindows(1000, 1000 + FALSE_INTERRUPTION_TIMEOUT_MS - 1),
        ]);
        const cut = events.find((e) => e.type === 'interrupted');
        if (limit === null) return assert.equal(cut, undefined);
        const factor = MODE_FACTORS[settings.mode] as number;
        assert.ok(limit >= settings.minInterruptMs * factor);
        if (settings.adaptive) assert.ok(limit >= BACKCHANNEL_MAX_MS * factor);
        if (limit + 32 >= FALSE_INTERRUPTION_TIMEOUT_MS) return;
        assert.equal(cut?.reason, 'sustained_speech');
        // At the first voiced window (32 ms) that reaches the limit, counted from the speech's onset, or when
        // the VAD confirms the speech if that is later.
        const latest = Math.max(1000 + START_DECISION_MS, 1000 + limit + 32);
        assert.ok(cut !== undefined && cut.atMs >= 1000 + limit && cut.atMs <= latest, `${cut?.atMs}`);
      }),
      { numRuns: 300 },
    );
  });

  test('nothing happens while the agent is silent', () => {
    fc.assert(
      fc.property(settingsArb, fc.array(opArb, { maxLength: 60 }), (settings, ops) => {
        const steps = script(ops).steps.filter((s) => s.kind !== 'agent_start');
        assert.deepEqual(playInterruption(settings, steps), []);
      }),
      { numRuns: 200 },
    );
  });
});

describe('Endpointer properties', () => {
  test('a turn never ends before speech, nor on silence rules while the caller speaks; silence waited >= required', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 60 }),
        fc.integer({ min: 0, max: 1500 }),
        (ops, endpointingMs) => {
          const { steps } = script(ops);
          const ends = playEndpointer(endpointingMs, steps);
          const allowed = [endpointingMs * SENTENCE_END_FACTOR, endpointingMs, holdMs(endpointingMs)];
          for (const end of ends) {
            // Evidence of speech since the previous turn end: a VAD start, or (before any turn end) words.
            const previous = ends[ends.indexOf(end) - 1];
            const since = steps.filter((s) => {
              const t = s.kind === 'vad' ? s.event.decidedAtMs : s.atMs;
              return t <= end.atMs && (previous === undefined || t > previous.atMs);
            });
            const vadStart = since.some((s) => s.kind === 'vad' && s.event.type === 'speech_start');
            const words = since.some(
              (s) => (s.kind === 'partial' || s.kind === 'final') && s.text.trim() !== '',
            );
            assert.ok(vadStart || (previous === undefined && words), 'speech before the turn end');
            assert.ok(end.endpointMs >= 0);
            assert.ok(end.endpointMs >= end.requiredMs, `${end.endpointMs} < ${end.requiredMs}`);
            assert.ok(allowed.includes(end.requiredMs), `required ${end.requiredMs}`);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  test('speech followed by silence always ends the turn eventually', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const { steps, endMs, speaking } = script(ops);
        const tail = [speechStart(endMs + 1000), speechEnd(endMs + 2000), tick(endMs + 10_000)];
        const before = speaking ? [speechEnd(endMs)] : [];
        const ends = playEndpointer(500, [...steps, ...before, ...tail]);
        assert.ok(ends.length > 0 && ends[ends.length - 1]!.atMs > endMs + 2000);
      }),
      { numRuns: 200 },
    );
  });
});

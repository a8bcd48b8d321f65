/**
 * Answering machine detection on its own: beeps made by sox against speech made by eSpeak NG and DTMF-like dual
 * tones; the greeting phrases in English, Hindi and Hinglish against ordinary sentences; the detection window;
 * and when a message may start.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { espeakSkip, speak } from '../../engines/vad/testing/speech.ts';
import { beep, concat, dualTone, silence, sox } from '../testing/caller-audio.ts';
import {
  findVoicemailCue,
  MAX_WAIT_FOR_MESSAGE_MS,
  type MessageMoment,
  messageMayStart,
  SILENCE_BEFORE_MESSAGE_MS,
  TRANSCRIPT_GRACE_MS,
  VoicemailDetector,
  type VoicemailSignal,
} from './detector.ts';
import { BEEP_MAX_HZ, BEEP_MIN_HZ, FrameAnalyzer, MIN_TONALITY } from './tone.ts';

const WINDOW_MS = 8000;

/** Runs audio through a detector in 20 ms frames from call time `startMs`; every signal with its frame's end. */
function run(audio: Int16Array, detector = new VoicemailDetector({ windowMs: WINDOW_MS }), startMs = 0) {
  const signals: VoicemailSignal[] = [];
  for (let i = 0, endMs = startMs + 20; i < audio.length; i += 320, endMs += 20) {
    signals.push(...detector.frame(audio.subarray(i, i + 320), endMs));
  }
  return { detector, signals };
}

describe('beeps', () => {
  for (const [seconds, hz, volume] of [
    [0.5, 1000, 0.5],
    [0.15, 440, 0.5],
    [0.3, 1400, 0.05],
    [1, 850, 0.9],
  ] as const) {
    test(`a ${seconds * 1000} ms ${hz} Hz beep at volume ${volume} is a voicemail beep`, () => {
      const { detector, signals } = run(concat(silence(300), beep(seconds, hz, volume), silence(300)));
      assert.equal(signals[0]?.type, 'detected');
      const evidence = detector.evidence[0];
      assert.equal(evidence?.kind, 'beep');
      assert.ok(
        evidence?.kind === 'beep' && Math.abs(evidence.frequencyHz - hz) <= 10,
        JSON.stringify(evidence),
      );
      assert.ok(evidence.atMs >= 280 && evidence.atMs <= 320, `starts at ${evidence.atMs}`);
      const ended = signals.find((s) => s.type === 'beep_ended');
      assert.ok(ended?.type === 'beep_ended');
      assert.ok(Math.abs(ended.durationMs - seconds * 1000) <= 40, `lasted ${ended.durationMs} ms`);
      assert.equal(detector.lastBeepEndMs, ended.atMs);
    });
  }

  test('tones outside 400-2,000 Hz, or shorter than 150 ms, are not beeps', () => {
    for (const audio of [beep(0.5, 300), beep(0.5, 2600), beep(0.1, 1000), beep(0.5, 1000, 0.003)]) {
      assert.deepEqual(run(concat(silence(200), audio)).signals, []);
    }
    assert.ok(BEEP_MIN_HZ === 400 && BEEP_MAX_HZ === 2000);
  });

  test('DTMF-like dual tones are not beeps: two peaks, neither holds the band', () => {
    const analyzer = new FrameAnalyzer();
    for (const [low, high] of [
      [697, 1209],
      [770, 1336],
      [852, 1477],
      [941, 1336],
    ] as const) {
      const audio = dualTone(0.5, low, high);
      assert.deepEqual(run(audio).signals, [], `${low}+${high} Hz`);
      const frame = analyzer.analyze(audio.subarray(3200, 3520));
      assert.ok(frame.tonality < MIN_TONALITY, `${low}+${high} Hz: tonality ${frame.tonality}`);
    }
  });

  test('white and pink noise are not beeps', () => {
    assert.deepEqual(run(sox('1', 'whitenoise', 'vol', '0.3')).signals, []);
    assert.deepEqual(run(sox('1', 'pinknoise', 'vol', '0.3')).signals, []);
  });

  test('speech is not a beep (eSpeak NG, English and Hindi, and a hum)', { skip: espeakSkip }, () => {
    for (const [text, voice] of [
      ['Hi, you have reached Ravi, please leave a message after the beep.', 'en-us'],
      ['Hello, how are you today? I can help you with your order.', 'en-gb'],
      ['कृपया संदेश छोड़ें, अभी उपलब्ध नहीं हैं, बाद में कॉल करें।', 'hi'],
      ['hmmmmmmmm mmmmm', 'en-us'],
    ] as const) {
      assert.deepEqual(run(speak(text, voice)).signals, [], text);
    }
  });

  test('a greeting then a beep: detected at the beep, which is heard to its end', {
    skip: espeakSkip,
  }, () => {
    const greeting = speak('Hi, you have reached Ravi, please leave a message after the beep.');
    const { detector, signals } = run(concat(greeting, silence(400), beep(0.5, 1000), silence(500)));
    const beepStartMs = greeting.length / 16 + 400;
    assert.deepEqual(
      signals.map((s) => s.type),
      ['detected', 'beep_ended'],
    );
    const evidence = detector.evidence[0];
    assert.ok(
      evidence?.kind === 'beep' && Math.abs(evidence.atMs - beepStartMs) <= 20,
      JSON.stringify(evidence),
    );
    assert.equal(detector.beeping, false);
  });
});

describe('the detection window', () => {
  test('a beep after the window is not a voicemail beep; one inside is, even if confirmed just after', () => {
    const late = run(beep(0.5, 1000), new VoicemailDetector({ windowMs: WINDOW_MS }), WINDOW_MS + 500);
    assert.deepEqual(late.signals, []);
    const edge = run(beep(0.5, 1000), new VoicemailDetector({ windowMs: WINDOW_MS }), WINDOW_MS - 60);
    assert.equal(edge.signals[0]?.type, 'detected');
  });

  test('transcripts count until the window plus the grace for a batch STT; later ones do not', () => {
    const detector = new VoicemailDetector({ windowMs: WINDOW_MS });
    assert.deepEqual(
      detector.transcript('Please leave a message.', WINDOW_MS + TRANSCRIPT_GRACE_MS + 20),
      [],
    );
    const signals = detector.transcript('Please leave a message.', WINDOW_MS + TRANSCRIPT_GRACE_MS);
    assert.deepEqual(signals, [
      {
        type: 'detected',
        evidence: {
          kind: 'transcript',
          atMs: WINDOW_MS + TRANSCRIPT_GRACE_MS,
          phrase: 'leave a message',
          text: 'Please leave a message.',
        },
      },
    ]);
  });

  test('after a detection, a beep is still listened for, and later cues are kept as evidence only', () => {
    const detector = new VoicemailDetector({ windowMs: WINDOW_MS });
    assert.equal(detector.transcript('The person you called is not available.', 3000)[0]?.type, 'detected');
    const { signals } = run(beep(0.5, 1000), detector, WINDOW_MS + 2000);
    assert.deepEqual(
      signals.map((s) => s.type),
      [],
      'no second detection, and no end without a following frame',
    );
    assert.equal(detector.beeping, true);
    assert.deepEqual(detector.frame(silence(20), WINDOW_MS + 2520), [
      { type: 'beep_ended', atMs: WINDOW_MS + 2500, durationMs: 500 },
    ]);
    assert.deepEqual(
      detector.evidence.map((e) => e.kind),
      ['transcript', 'beep'],
    );
    detector.stop();
    assert.deepEqual(run(beep(0.5, 1000), detector, WINDOW_MS + 4000).signals, []);
  });
});

describe('greeting phrases', () => {
  const voicemail: Array<[string, string]> = [
    ['Hi, you have reached Ravi, please leave a message after the beep.', 'leave a message'],
    ['The person you are calling is not available right now.', 'not available'],
    ['Your call has been forwarded to an automated voice messaging system. Voicemail.', 'voicemail'],
    ['The mailbox is full.', 'mailbox'],
    ['Please record your message at the tone.', 'record your message'],
    ['Please speak at the tone.', 'at the tone'],
    ['I cannot take your call right now.', 'cannot take your call'],
    ['कृपया संदेश छोड़ें।', 'कृपया संदेश'],
    ['आप जिस व्यक्ति को कॉल कर रहे हैं वह अभी उपलब्ध नहीं है।', 'उपलब्ध नहीं'],
    ['Ravi abhi uplabdh nahi hai, kripya baad mein call karein.', 'abhi uplabdh nahi'],
    ['Beep ke baad apna message chhodiye.', 'beep ke baad'],
    ['Kripya baad mein call karein.', 'baad mein call'],
  ];
  for (const [text, phrase] of voicemail) {
    test(`"${text}" is a voicemail greeting (${phrase})`, () => {
      assert.equal(findVoicemailCue(text), phrase);
    });
  }
  test('ordinary sentences are not', () => {
    for (const text of [
      'Hello?',
      'Yes, this is Ravi speaking.',
      'I want to leave my address with you.',
      'Is the blue one available?',
      'Haan ji, boliye.',
      'हाँ जी, बोलिए।',
      'The message was clear, thank you.',
    ]) {
      assert.equal(findVoicemailCue(text), null, text);
    }
  });
});

describe('when a voicemail message may start', () => {
  const at = (m: Partial<MessageMoment>): MessageMoment => ({
    nowMs: 10_000,
    detectedAtMs: 9_000,
    beeping: false,
    lastBeepEndMs: null,
    speaking: false,
    quietSinceMs: 9_500,
    ...m,
  });
  test('after the beep ended, not while it sounds or the greeting goes on', () => {
    assert.equal(messageMayStart(at({ lastBeepEndMs: 9_900 })), true);
    assert.equal(messageMayStart(at({ beeping: true })), false);
    assert.equal(messageMayStart(at({ lastBeepEndMs: 9_900, speaking: true })), false);
  });
  test('without a beep: after a silence, or at the latest after the longest wait', () => {
    assert.equal(messageMayStart(at({})), false);
    assert.equal(messageMayStart(at({ nowMs: 9_500 + SILENCE_BEFORE_MESSAGE_MS })), true);
    assert.equal(messageMayStart(at({ speaking: true, nowMs: 9_000 + MAX_WAIT_FOR_MESSAGE_MS })), true);
  });
});

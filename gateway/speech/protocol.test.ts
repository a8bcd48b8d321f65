import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readClientFrame, settingsFromQuery } from './protocol.ts';

const text = (value: string) => readClientFrame(new TextEncoder().encode(value), false);

test('settings: language is required, the rest default, bad values are named', () => {
  assert.deepEqual(settingsFromQuery('language_code=hi-IN'), {
    ok: true,
    settings: { language: 'hi-IN', encoding: 'pcm16', sampleRate: 16000, endpointing: 'manual' },
  });
  const full = settingsFromQuery('language_code=en-IN&encoding=alaw&sample_rate=8000&endpointing=auto');
  assert.ok(full.ok && full.settings.encoding === 'alaw' && full.settings.sampleRate === 8000);
  for (const [query, field] of [
    ['', 'language_code'],
    ['language_code=fr-FR', 'language_code'],
    ['language_code=en-IN&encoding=opus', 'encoding'],
    ['language_code=en-IN&sample_rate=22050', 'sample_rate'],
    ['language_code=en-IN&endpointing=smart', 'endpointing'],
    [`language_code=en-IN&x=${'a'.repeat(3000)}`, 'too long'],
  ] as const) {
    const result = settingsFromQuery(query);
    assert.ok(
      !result.ok && result.message.includes(field),
      `${query.slice(0, 40)}: ${JSON.stringify(result)}`,
    );
  }
});

test('client frames: the four events, base64 audio, binary audio, and what is refused', () => {
  assert.deepEqual(text('{"event":"speech_start"}'), { type: 'speech_start' });
  assert.deepEqual(text('{"event":"speech_end"}'), { type: 'speech_end' });
  assert.deepEqual(text('{"event":"end"}'), { type: 'end' });
  const audio = text('{"event":"audio_input","audio":"AAEC"}');
  assert.equal(audio.type, 'audio');
  assert.deepEqual(audio.type === 'audio' ? [...audio.bytes] : [], [0, 1, 2]);
  const binary = readClientFrame(new Uint8Array([1, 2]), true);
  assert.deepEqual(binary.type === 'audio' ? [...binary.bytes] : [], [1, 2]);
  for (const bad of [
    'nope',
    '[]',
    '"end"',
    '{"event":"dance"}',
    '{"event":"audio_input"}',
    '{"event":"audio_input","audio":"@@@@"}',
    '{"event":"audio_input","audio":"AAE"}',
  ]) {
    assert.equal(text(bad).type, 'bad', bad);
  }
});

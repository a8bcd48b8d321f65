import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storedSettings } from './settings.ts';
import { DEFAULT_BEHAVIOR } from './types.ts';

test('settings saved before the silence settings existed read back with their defaults', () => {
  const saved = {
    name: 'Old',
    end_call: { enabled: false, message: 'Bye', confirm: false },
    behavior: {
      interruptions: 'low',
      adaptive_interruptions: true,
      min_interrupt_ms: 300,
      min_words: 0,
      endpointing_ms: 700,
    },
  };
  const settings = storedSettings(saved);
  assert.deepEqual(settings.end_call, {
    enabled: false,
    message: 'Bye',
    confirm: false,
    after_silence_reprompts: 2,
  });
  assert.deepEqual(settings.behavior, {
    ...DEFAULT_BEHAVIOR,
    interruptions: 'low',
    endpointing_ms: 700,
  });
  const kept = storedSettings({ ...saved, behavior: { ...saved.behavior, silence_reprompt_secs: 0 } });
  assert.equal(kept.behavior.silence_reprompt_secs, 0);
});

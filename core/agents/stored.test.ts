import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StoredSettingsError, settingsJson, storedSettings, storedTools } from './stored.ts';
import { type AgentSettings, DEFAULT_BEHAVIOR, DEFAULT_END_CALL } from './types.ts';

const settings: AgentSettings = {
  name: 'Asha',
  draft: false,
  archived: false,
  system_prompt: 'You book appointments.',
  first_message: 'Namaste!',
  language: 'hi-IN',
  secondary_languages: ['en-IN'],
  voice: { voice_id: 'espeak-hi', language: 'hi-IN' },
  max_duration_secs: 300,
  end_call: { ...DEFAULT_END_CALL },
  voicemail: { action: 'leave_message', message: 'Call us back' },
  background_sound: { sound: 'off' },
  behavior: { ...DEFAULT_BEHAVIOR },
  analysis: { enabled: true, structured_data: [{ name: 'slot', type: 'string', description: 'When' }] },
  tools: [
    {
      name: 'lookup',
      phase: 'on_call',
      description: 'Finds a slot',
      parameters: { type: 'object', properties: {} },
      request: {
        method: 'POST',
        url: 'https://example.com/x',
        headers: { a: '{{ secrets.k }}' },
        body: { q: 1 },
      },
      timeout_ms: 2000,
    },
  ],
  flow: {
    nodes: [
      {
        id: 'start',
        type: 'startCall',
        data: {
          name: 'Start',
          prompt: 'Greet',
          greeting: 'Hello',
          is_start: true,
          allow_interrupt: true,
          add_global_prompt: true,
          extraction_enabled: false,
          extraction_variables: [],
          tools: ['lookup'],
          silence_reprompt_secs: 5,
        },
      },
    ],
    edges: [],
  },
};

/** What the repository hands back: the stored JSON text parsed, typed as nothing in particular. */
const throughJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

test('settings read back exactly as they were saved, tools and flow included', () => {
  assert.deepEqual(storedSettings(throughJson(settingsJson(settings))), settings);
  assert.deepEqual(storedTools({ content: throughJson(settingsJson(settings)) }), settings.tools);
  assert.deepEqual(storedTools(undefined), []);
});

test('settings saved before the silence settings existed read back with their defaults', () => {
  const saved = {
    ...settings,
    end_call: { enabled: false, message: 'Bye', confirm: false },
    behavior: {
      interruptions: 'low',
      adaptive_interruptions: true,
      min_interrupt_ms: 300,
      min_words: 0,
      endpointing_ms: 700,
    },
  };
  const decoded = storedSettings(throughJson(saved));
  assert.deepEqual(decoded.end_call, {
    enabled: false,
    message: 'Bye',
    confirm: false,
    after_silence_reprompts: 2,
  });
  assert.deepEqual(decoded.behavior, {
    ...DEFAULT_BEHAVIOR,
    interruptions: 'low',
    endpointing_ms: 700,
  });
  const kept = storedSettings({ ...saved, behavior: { ...saved.behavior, silence_reprompt_secs: 0 } });
  assert.equal(kept.behavior.silence_reprompt_secs, 0);
  const { end_call: _e, behavior: _b, ...withoutBoth } = settings;
  const older = storedSettings(throughJson(withoutBoth));
  assert.deepEqual([older.end_call, older.behavior], [DEFAULT_END_CALL, DEFAULT_BEHAVIOR]);
});

test('stored JSON without the settings shape is refused with the field, not read as settings', () => {
  const broken = [
    [null, ''],
    [{ ...settings, tools: [{ name: 'x' }] }, 'tools.0.phase'],
    [{ ...settings, voice: 'espeak-hi' }, 'voice'],
    [{ ...settings, max_duration_secs: '300' }, 'max_duration_secs'],
  ] as const;
  for (const [content, path] of broken) {
    assert.throws(
      () => storedSettings(throughJson(content)),
      (error: unknown) =>
        error instanceof StoredSettingsError &&
        error.message.startsWith(`stored agent settings do not decode: ${path}`),
      path,
    );
  }
});

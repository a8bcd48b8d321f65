import { type AgentSettings, DEFAULT_BEHAVIOR, DEFAULT_END_CALL } from '../types.ts';

/** An agent as stored, with the platform's defaults; tests override what they are about. */
export function testAgent(overrides: Partial<AgentSettings> = {}): AgentSettings {
  return {
    name: 'Asha',
    draft: false,
    archived: false,
    system_prompt: 'You are Asha from Acme, helping {{name}} with their order.',
    first_message: 'Hello {{name}}, this is Asha from Acme.',
    language: 'en-IN',
    secondary_languages: [],
    voice: { voice_id: 'local-en-female', language: 'en-IN' },
    max_duration_secs: 120,
    end_call: { ...DEFAULT_END_CALL, message: 'Goodbye!' },
    voicemail: { action: 'hangup' },
    background_sound: { sound: 'off' },
    behavior: { ...DEFAULT_BEHAVIOR },
    analysis: { enabled: false },
    tools: [],
    ...overrides,
  };
}

/** Who calls in a flow job's simulated calls, besides the invented callers, and the agent they call. */
import { type AgentSettings, DEFAULT_BEHAVIOR, DEFAULT_END_CALL } from '../../agents/types.ts';
import type { JobInput, Scenario } from './stored.ts';
import { mostDifferentFirst } from './transcripts.ts';

/** Real calls replayed in a verifying round, at most. */
const MAX_CALL_REPLAYS = 5;

const replay = (kind: 'example' | 'call', index: number, what: string): Scenario => ({
  kind,
  index,
  name: `Caller of ${what} ${index + 1}`,
  goal: 'Replay the caller of the original call.',
  persona: 'As in the original call.',
  variables: {},
});

/** `count` example calls to replay, most different first. */
export function exampleReplays(examples: readonly string[], count: number): Scenario[] {
  return mostDifferentFirst(examples, count).map((index) => replay('example', index, 'example'));
}

/** A replay of each real call's caller (at most 5). */
export function callReplays(calls: number): Scenario[] {
  return Array.from({ length: Math.min(calls, MAX_CALL_REPLAYS) }, (_, index) =>
    replay('call', index, 'test call'),
  );
}

/** The agent a flow runs on in simulated calls when the request names none: every setting at its default. */
export function simulationAgent(input: Pick<JobInput, 'language' | 'max_duration_secs'>): AgentSettings {
  const language = input.language ?? 'en-IN';
  return {
    name: 'Flow test',
    draft: false,
    archived: false,
    system_prompt: '',
    first_message: '',
    language,
    secondary_languages: [],
    voice: { voice_id: '', language },
    max_duration_secs: input.max_duration_secs ?? 300,
    end_call: { ...DEFAULT_END_CALL },
    voicemail: { action: 'hangup' },
    background_sound: { sound: 'off' },
    behavior: { ...DEFAULT_BEHAVIOR },
    analysis: { enabled: false },
    tools: [],
  };
}

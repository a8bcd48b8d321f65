/**
 * The sandbox's magic numbers (docs/architecture.md, "Carriers and engines"). The sandbox carrier dials no phone network: the
 * last digit of the destination number decides how its simulated callee behaves. Callees that answer connect
 * to the media gateway over Twilio's Media Streams protocol, like a real carrier.
 *
 * | `to` ends in | the simulated callee | the call ends |
 * |---|---|---|
 * | `0` | busy: rings briefly, then the carrier reports busy | `busy` |
 * | `1` | never answers: rings for `SANDBOX_RING_MS` (default 3 s) | `no_answer` |
 * | `2` | answering machine: a spoken greeting, a 1 kHz beep, then silence | `voicemail` |
 * | `3` | answers and stays silent until the agent ends the call or `max_duration_secs` passes | `timeout` |
 * | `4` | answers, then hangs up after 2 s | `completed` |
 * | `5` | the carrier fails to place the call | `failed` |
 * | anything else | answers and converses: waits for the agent's opening line, speaks the next line of its script (local TTS) each time the agent pauses for 0.7 s, hangs up once the agent has answered its last line | `completed` |
 *
 * `5` is an addition of ours: it is there so that a `failed` call can be placed in the sandbox too.
 * Every callee that answers rings `answerDelayMs` (default 0.4 s) first; busy and carrier failure are reported
 * after the same short ring. A conversing callee whose agent says nothing for 5 s speaks first. A callee whose
 * media stream cannot connect (gateway unreachable, stream token refused) is reported as a carrier failure.
 */

export type SandboxBehaviour =
  | 'busy'
  | 'no_answer'
  | 'answering_machine'
  | 'silent'
  | 'hangs_up'
  | 'carrier_failure'
  | 'converse';

const BY_LAST_DIGIT: Readonly<Record<string, SandboxBehaviour>> = {
  '0': 'busy',
  '1': 'no_answer',
  '2': 'answering_machine',
  '3': 'silent',
  '4': 'hangs_up',
  '5': 'carrier_failure',
};

/** The behaviour for a destination number: by its last digit, `converse` for any other ending. */
export function behaviourFor(toNumber: string): SandboxBehaviour {
  const lastDigit = /(\d)\D*$/.exec(toNumber)?.[1];
  return (lastDigit !== undefined ? BY_LAST_DIGIT[lastDigit] : undefined) ?? 'converse';
}

/** Ring time of a callee that never answers (`SANDBOX_RING_MS`). */
export const DEFAULT_RING_MS = 3000;
/** Ring time before a callee answers, and before busy or a carrier failure is reported. */
export const DEFAULT_ANSWER_DELAY_MS = 400;
/** How long the `4` callee stays on the line. */
export const HANG_UP_AFTER_MS = 2000;

/** Silence after the agent's speech that makes the conversing callee take its turn. */
export const AGENT_PAUSE_MS = 700;
/** A conversing callee whose agent has said nothing this long after answering speaks first. */
export const SILENT_AGENT_PROMPT_MS = 5000;
/** After its last line the callee waits at most this long for the agent's answer to finish, then hangs up. */
export const GOODBYE_WAIT_MS = 5000;

export const DEFAULT_CALLER_SCRIPT: readonly string[] = [
  'Yes, speaking.',
  'I wanted to ask about my order.',
  'Okay, thank you. Goodbye.',
];
export const VOICEMAIL_GREETING = 'Hi, you have reached Sam. Please leave a message after the tone.';
/** Pause between the greeting and the beep. */
export const GREETING_TO_BEEP_MS = 300;
/**
 * The machine's beep: a steady tone inside the band `pipeline/voicemail/tone.ts` looks for (400-2,000 Hz), loud enough
 * (above -40 dBFS) and much longer than its 7 frames.
 */
export const BEEP = { frequencyHz: 1000, durationMs: 500, level: 0.3 } as const;

/** Catalogue voices (engines/tts/voices.json) of the conversing callee and the answering machine. */
export const CALLEE_VOICE_ID = 'local-en-male';
export const MACHINE_VOICE_ID = 'local-en-female';

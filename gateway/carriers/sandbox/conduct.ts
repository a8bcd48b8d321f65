import {
  BEEP,
  GREETING_TO_BEEP_MS,
  HANG_UP_AFTER_MS,
  MACHINE_VOICE_ID,
  VOICEMAIL_GREETING,
} from './behaviour.ts';
import { type PreparedSpeech, silenceFrames, toneFrames } from './callee-audio.ts';
import type { Mouth } from './mouth.ts';
import type { PlayedFrame } from './playback.ts';

const BEEP_FRAMES = toneFrames(BEEP);
const PAUSE_BEFORE_BEEP = silenceFrames(GREETING_TO_BEEP_MS);

/**
 * How an answered callee behaves once its media stream is up: called every 20 ms with the agent audio it just
 * heard; it talks by queuing frames in its mouth and ends the call through `hangUp`.
 */
export interface CalleeConduct {
  tick(heard: PlayedFrame, streamMs: number): void;
}

export interface ConductTools {
  readonly mouth: Mouth;
  readonly speech: PreparedSpeech;
  readonly hangUp: () => void;
}

/** `3`: says nothing, ever; the agent or the call's maximum duration ends the call. */
export function staySilent(): CalleeConduct {
  return { tick() {} };
}

/** `4`: silence, then a hang-up `HANG_UP_AFTER_MS` after answering. */
export function hangUpSoon(tools: ConductTools): CalleeConduct {
  let done = false;
  return {
    tick(_heard, streamMs) {
      if (done || streamMs < HANG_UP_AFTER_MS) return;
      done = true;
      tools.hangUp();
    },
  };
}

/** `2`: the greeting as soon as it is synthesized, a beep, then silence while the message is recorded. */
export function answeringMachine(tools: ConductTools): CalleeConduct {
  let greeted = false;
  return {
    tick() {
      if (greeted) return;
      const greeting = tools.speech.frames(MACHINE_VOICE_ID, VOICEMAIL_GREETING);
      if (greeting === undefined) return;
      greeted = true;
      tools.mouth.say([...greeting, ...PAUSE_BEFORE_BEEP, ...BEEP_FRAMES]);
    },
  };
}

/** Starts synthesizing the machine's greeting ahead of any call. */
export function prepareMachine(speech: PreparedSpeech): void {
  speech.prepare(MACHINE_VOICE_ID, VOICEMAIL_GREETING);
}

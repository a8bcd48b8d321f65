/**
 * A narrow typed wrapper over the eSpeak NG WASM module. The C library keeps one global synthesizer, so a module
 * instance is not re-entrant; we only ever drive it from one thread (espeak-worker.ts), one job at a time.
 */
import createEspeakModule from '@echogarden/espeak-ng-emscripten';

export interface EspeakWasm {
  readonly sampleRate: number;
  /** Returns false when eSpeak has no such voice (language or language+variant, such as `hi+f3`). */
  setVoice(voice: string): boolean;
  setRate(wordsPerMinute: number): void;
  /**
   * Speaks plain text (escaped here for eSpeak's SSML reader), calling `onAudio` with each block of PCM16 as it is
   * made (about 100 ms each); `onAudio` returns true to stop. Synchronous: it returns when synthesis ends.
   */
  speak(text: string, onAudio: (samples: Int16Array) => boolean): void;
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

export function escapeForEspeak(text: string): string {
  return text.replace(/[&<>]/g, (char) => ENTITIES[char]!);
}

export async function loadEspeakWasm(): Promise<EspeakWasm> {
  const module = await createEspeakModule({ print: () => {}, printErr: () => {} });
  const synth = new module.eSpeakNGWorker();
  return {
    sampleRate: synth.get_samplerate(),
    setVoice: (voice) => voice.trim() !== '' && synth.set_voice(voice) === 0,
    setRate: (wordsPerMinute) => synth.set_rate(wordsPerMinute),
    speak: (text, onAudio) => synth.synthesize(escapeForEspeak(text), (samples) => onAudio(samples)),
  };
}

/**
 * Types for the parts of `@echogarden/espeak-ng-emscripten` we use (the package ships none). It exports an
 * Emscripten module factory; the module holds eSpeak NG compiled to WASM, with its voice data (`espeak-ng.data`,
 * beside the script) loaded into the in-memory file system when the factory resolves.
 */
declare module '@echogarden/espeak-ng-emscripten' {
  export interface EspeakEvent {
    type: string;
    text_position: number;
    word_length: number;
    /** Milliseconds from the start of the utterance. */
    audio_position: number;
    id?: string | number;
  }

  /** The binding's synthesizer object (one per module; the C library behind it is a single global instance). */
  export interface ESpeakNGWorker {
    /** Selects a voice such as `hi`, `en-us` or `hi+f3` (language + variant); returns 0 on success. */
    set_voice(name: string): number;
    /** Words per minute, 80-450 (default 175). */
    set_rate(wordsPerMinute: number): void;
    get_samplerate(): number;
    /**
     * Synthesizes `text` (SSML is on: `<`, `>` and `&` must be escaped) synchronously, calling `callback` with each
     * block of PCM16 samples (a copy) as it is made; returning true from the callback stops the synthesis.
     */
    synthesize(text: string, callback: (samples: Int16Array, events: EspeakEvent[]) => boolean): void;
  }

  export interface EspeakModule {
    eSpeakNGWorker: new () => ESpeakNGWorker;
  }

  export interface EspeakModuleOptions {
    print?: (text: string) => void;
    printErr?: (text: string) => void;
  }

  const createEspeakModule: (options?: EspeakModuleOptions) => Promise<EspeakModule>;
  export default createEspeakModule;
}

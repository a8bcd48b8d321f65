/**
 * Local speech to text with CMU PocketSphinx, English only. Debian 12 ships PocketSphinx 0.8 (5prealpha), with
 * the US English acoustic model, language model and dictionary under /usr/share/pocketsphinx/model/en-us
 * (`pocketsphinx-en-us`). Two decoders:
 * - `resident` (the default when built): the native addon in engines/stt/native, built by `npm ci` against
 *   `libpocketsphinx-dev`. Decoders stay loaded in a shared pool; `stream()` feeds each utterance to one while
 *   the caller speaks (partials as it goes) and ends it at the speech end, so the final comes tens of ms after
 *   the segmenter's silence instead of a model load and a whole decode later (sphinx-resident.ts).
 * - `spawn` (the fallback without the addon, and the bench's baseline): each utterance is written to a
 *   temporary 16 kHz mono WAV and decoded by `pocketsphinx_continuous -infile` (package `pocketsphinx`), which
 *   loads the model each time and prints one line per stretch of speech it finds; the lines are the text.
 *
 * Either way `stream()` segments audio with the VAD given at construction. Accuracy on phone audio is modest (a
 * 16 kHz acoustic model): good enough for the offline sandbox and tests, not for production calls. A decoder failure
 * is a non-retryable `EngineError`; aborting the signal stops the decoding.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CANONICAL_RATE, writeWav } from '../../../codecs/index.ts';
import { EngineError } from '../../errors.ts';
import type { VoiceActivityDetector } from '../../vad/types.ts';
import { isEnglish } from '../language.ts';
import {
  type IncrementalTranscriber,
  type IncrementalUtterance,
  type VadSegmentationOptions,
  VadSegmentedStream,
} from '../stream-adapter.ts';
import type { SpeechToText, SttCapabilities, SttStream, SttStreamOptions } from '../types.ts';
import { SphinxDecoderPool, sphinxAddon } from './sphinx-resident.ts';

export const SPHINX_STT_ENGINE = 'stt:sphinx';

export type SphinxLanguageModel = 'general' | 'agent-calls';

const AGENT_CALLS_MODEL = {
  lm: fileURLToPath(new URL('../domain/agent-calls.lm', import.meta.url)),
  dict: fileURLToPath(new URL('../domain/agent-calls.dict', import.meta.url)),
};

/** `resident`: decoders kept loaded (the native addon); `spawn`: one `pocketsphinx_continuous` per utterance. */
export type SphinxDecoderKind = 'resident' | 'spawn';

export interface SphinxTranscriberOptions {
  /** Default: `resident` when the native addon is built, else `spawn`. */
  decoder?: SphinxDecoderKind;
  /**
   * For `resident`: `agent-calls` (default), a small bigram model of everyday agent-call phrases
   * (engines/stt/domain: yes/no, numbers, dates, days, common requests; ~280 words), or `general`, the model's
   * own 130k-word English model. On phone speech the small one hears more words right (bench/stt.ts: word
   * error rate 0.70 against 0.92) for a tenth of the CPU, so its decoder keeps up with the caller even on a busy
   * machine; words outside its vocabulary come out as the nearest phrases it knows.
   */
  languageModel?: SphinxLanguageModel;
  /** For `spawn`; default `pocketsphinx_continuous` (on PATH). */
  command?: string;
  /** Holds `en-us/` (acoustic model), `en-us.lm.bin` and `cmudict-en-us.dict`. */
  modelDir?: string;
  timeoutMs?: number;
  /** Segments audio for `stream()`; without one, `stream()` throws. */
  vad?: VoiceActivityDetector;
  segmentation?: VadSegmentationOptions;
}

export const SPHINX_DEFAULTS = {
  command: 'pocketsphinx_continuous',
  modelDir: '/usr/share/pocketsphinx/model/en-us',
  // Loading the model takes ~0.3 s and decoding runs at ~0.1-0.3x real time on one core here, so a 30 s
  // utterance (the adapter's longest) takes under 10 s even on a busy machine; past 20 s the process is stuck.
  timeoutMs: 20_000,
  // Decoders loaded and idle, kept for the next utterances (~8 MB and ~0.1 s to load with the agent-call model,
  // ~95 MB and ~0.5 s with the general one); more are loaded when more callers speak at once.
  maxIdleDecoders: 2,
  languageModel: 'agent-calls' satisfies SphinxLanguageModel,
} as const;

/**
 * The resident decoder's search: one forward pass, the final being its best path at the end of the utterance.
 * The default second and third passes (`-fwdflat`, `-bestpath`) cost ~450 ms at the end of each utterance for
 * no gain in word error rate on the bench's phone speech (bench/stt.ts); without them, ending takes ~30 ms.
 * Tighter pruning (`-maxhmmpf 3000`) would halve the CPU per second of audio (~0.7 s to ~0.3 s on a busy
 * machine) but lost words on the test phrases; the small `agent-calls` model is the cheap option (~0.08 s).
 */
const RESIDENT_SEARCH_ARGS = ['-fwdflat', 'no', '-bestpath', 'no'];

/** Pools by decoder arguments, shared by every transcriber with the same model. */
const pools = new Map<string, SphinxDecoderPool>();

export class SphinxTranscriber implements SpeechToText, IncrementalTranscriber {
  readonly provider = 'sphinx';
  readonly capabilities: SttCapabilities;
  readonly languages: readonly string[] = ['en-IN', 'en-US', 'en-GB'];
  readonly decoder: SphinxDecoderKind;
  readonly #pool: SphinxDecoderPool | undefined;
  readonly #command: string;
  readonly #modelDir: string;
  readonly #timeoutMs: number;
  readonly #vad: VoiceActivityDetector | undefined;
  readonly #segmentation: VadSegmentationOptions;

  constructor(options: SphinxTranscriberOptions = {}) {
    this.#command = options.command ?? SPHINX_DEFAULTS.command;
    this.#modelDir = options.modelDir ?? SPHINX_DEFAULTS.modelDir;
    this.#timeoutMs = options.timeoutMs ?? SPHINX_DEFAULTS.timeoutMs;
    this.#vad = options.vad;
    this.#segmentation = options.segmentation ?? {};
    this.decoder = options.decoder ?? SphinxTranscriber.preferredDecoder();
    if (this.decoder === 'resident' && !sphinxAddon()) {
      throw failure(
        'the resident sphinx decoder is not built: apt-get install libpocketsphinx-dev, then npm ci',
      );
    }
    this.#pool =
      this.decoder === 'resident'
        ? residentPool(this.#modelDir, options.languageModel ?? SPHINX_DEFAULTS.languageModel)
        : undefined;
    const live = this.#pool !== undefined;
    this.capabilities = { streaming: live, interimResults: live };
  }

  /** `resident` when the native addon is built, else `spawn`. */
  static preferredDecoder(): SphinxDecoderKind {
    return sphinxAddon() ? 'resident' : 'spawn';
  }

  /** Whether the decoder and the English model are installed (a cheap synchronous check, made at each call). */
  static available(
    options: Pick<SphinxTranscriberOptions, 'decoder' | 'command' | 'modelDir'> = {},
  ): boolean {
    const modelDir = options.modelDir ?? SPHINX_DEFAULTS.modelDir;
    if (!modelFiles(modelDir).every((file) => existsSync(file))) return false;
    const decoder = options.decoder ?? SphinxTranscriber.preferredDecoder();
    if (decoder === 'resident') return sphinxAddon() !== null;
    // With no arguments the decoder prints its options and exits with an error status: it runs, that is enough.
    const probe = spawnSync(options.command ?? SPHINX_DEFAULTS.command, [], { stdio: 'ignore' });
    return probe.error === undefined;
  }

  stream(options: SttStreamOptions): SttStream {
    if (!this.#vad) throw failure('the sphinx transcriber needs a voice activity detector to stream');
    // The call's first utterance should not wait for a model load.
    this.#pool?.prepare();
    const batch = { transcribe: this.transcribe.bind(this) };
    return new VadSegmentedStream(this.#pool ? this : batch, this.#vad, {
      ...this.#segmentation,
      ...options,
    });
  }

  /** Decodes one utterance while it is heard (resident decoder only). */
  utterance(options: SttStreamOptions, onPartial: (text: string) => void): IncrementalUtterance {
    const pool = this.#pool;
    if (!pool) throw failure('the spawned sphinx decoder transcribes whole utterances only');
    const language = options.language;
    if (!isEnglish(language)) {
      const refusal = failure(`sphinx transcribes English only, not ${language}`);
      return { feed: () => {}, finish: () => Promise.reject(refusal), cancel: () => {} };
    }
    const decoding = pool.utterance(onPartial);
    return {
      feed: (samples) => decoding.feed(samples),
      finish: async () => {
        try {
          return { text: await decoding.finish(), language };
        } catch (error) {
          throw failure(`the sphinx decoder failed: ${String(error)}`, error);
        }
      },
      cancel: () => decoding.cancel(),
    };
  }

  async transcribe(
    audio: Int16Array,
    options: SttStreamOptions,
  ): Promise<{ text: string; language?: string }> {
    if (!isEnglish(options.language)) {
      throw failure(`sphinx transcribes English only, not ${options.language}`);
    }
    if (audio.length === 0) return { text: '' };
    if (options.signal?.aborted) throw failure('transcription aborted');
    if (this.#pool) return this.#transcribeResident(audio, options);
    const dir = await mkdtemp(path.join(tmpdir(), 'voiceagent-sphinx-'));
    try {
      const file = path.join(dir, 'utterance.wav');
      await writeFile(file, writeWav({ sampleRate: CANONICAL_RATE, channels: [audio] }));
      const text = await this.#decode(file, options.signal);
      return { text, language: options.language };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async #transcribeResident(
    audio: Int16Array,
    options: SttStreamOptions,
  ): Promise<{ text: string; language?: string }> {
    const decoding = this.utterance(options, () => {});
    const signal = options.signal;
    const onAbort = (): void => decoding.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      decoding.feed(audio);
      const result = await decoding.finish();
      if (signal?.aborted) throw failure('transcription aborted');
      return result;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  #decode(file: string, signal: AbortSignal | undefined): Promise<string> {
    const [hmm, lm, dict] = modelFiles(this.#modelDir);
    const args = [
      '-infile',
      file,
      '-hmm',
      hmm!,
      '-lm',
      lm!,
      '-dict',
      dict!,
      '-samprate',
      String(CANONICAL_RATE),
    ];
    // The decoder logs to stderr at length; `-logfn /dev/null` would hide its errors too, so stderr is kept
    // (and only its tail reported).
    const child = spawn(this.#command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    return new Promise((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-4_000);
      });
      const onAbort = (): void => {
        child.kill('SIGKILL');
      };
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
      }, this.#timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanUp = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      child.on('error', (error) => {
        cleanUp();
        reject(failure(`cannot run ${this.#command}: ${error.message}`, error));
      });
      child.on('close', (code, killedBy) => {
        cleanUp();
        if (signal?.aborted) reject(failure('transcription aborted'));
        else if (killedBy !== null)
          reject(failure(`${this.#command} was stopped (${killedBy}): no result in time`));
        else if (code !== 0) reject(failure(`${this.#command} exited with ${code}: ${lastLines(stderr)}`));
        else resolve(hypothesis(stdout));
      });
    });
  }
}

/** The decoder's stdout: one hypothesis per line (per stretch of speech); log lines go to stderr. */
export function hypothesis(stdout: string): string {
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^(INFO|WARN|ERROR|FATAL)/.test(line))
    .join(' ')
    .replace(/\s+/g, ' ');
}

function residentPool(modelDir: string, model: SphinxLanguageModel): SphinxDecoderPool | undefined {
  const addon = sphinxAddon();
  if (!addon) return undefined;
  const [hmm, generalLm, generalDict] = modelFiles(modelDir);
  const [lm, dict] =
    model === 'agent-calls' ? [AGENT_CALLS_MODEL.lm, AGENT_CALLS_MODEL.dict] : [generalLm, generalDict];
  const args = [
    '-hmm',
    hmm!,
    '-lm',
    lm!,
    '-dict',
    dict!,
    '-samprate',
    String(CANONICAL_RATE),
    ...RESIDENT_SEARCH_ARGS,
  ];
  const key = args.join('\0');
  let pool = pools.get(key);
  if (!pool) {
    pool = new SphinxDecoderPool(addon, args, SPHINX_DEFAULTS.maxIdleDecoders);
    pools.set(key, pool);
  }
  return pool;
}

function modelFiles(modelDir: string): string[] {
  return [
    path.join(modelDir, 'en-us'),
    path.join(modelDir, 'en-us.lm.bin'),
    path.join(modelDir, 'cmudict-en-us.dict'),
  ];
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ');
}

function failure(message: string, cause?: unknown): EngineError {
  return new EngineError(message, { engine: SPHINX_STT_ENGINE, retryable: false, cause });
}

/**
 * PocketSphinx kept loaded: the native addon (engines/stt/native, built by `npm ci` when Debian's
 * `libpocketsphinx-dev` is installed), a pool of loaded decoders shared by every stream, and the decoding of one
 * utterance while it is spoken.
 *
 * Loading a decoder takes 0.1-0.5 s of CPU and 8-95 MB (by language model), so decoders are loaded once and
 * reused: a stream holds one only while an utterance is being decoded, and returns it after the final. Audio is fed
 * as it is heard (whatever piled up while the previous piece was decoding goes in one piece), each piece
 * giving a partial hypothesis; ending the utterance gives the final one. Loading and decoding run on the libuv
 * thread pool, never on the event loop.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** A loaded decoder, opaque: only the addon reads it. */
export type NativeDecoder = { readonly __brand: 'SphinxDecoder' };

interface SphinxAddon {
  load(args: string[]): Promise<NativeDecoder>;
  decode(decoder: NativeDecoder, samples: Int16Array | null, start: boolean, end: boolean): Promise<string>;
  release(decoder: NativeDecoder): void;
}

const ADDON_PATH = fileURLToPath(new URL('../native/build/Release/sphinx_decoder.node', import.meta.url));

let addon: SphinxAddon | null | undefined;

/** The addon, or null when it was not built (no PocketSphinx headers when `npm ci` ran). */
export function sphinxAddon(): SphinxAddon | null {
  if (addon !== undefined) return addon;
  addon = null;
  if (existsSync(ADDON_PATH)) {
    try {
      addon = createRequire(import.meta.url)(ADDON_PATH) as SphinxAddon;
    } catch {
      // Built against a library since removed: the same as not built.
    }
  }
  return addon;
}

/**
 * Loaded decoders for one set of decoder arguments. `acquire` hands out an idle one (or loads one); `release`
 * keeps up to `maxIdle` for the next utterance and frees the rest. `prepare` loads one ahead, so the first
 * utterance of a call does not wait for the model.
 */
export class SphinxDecoderPool {
  readonly #addon: SphinxAddon;
  readonly #args: string[];
  readonly #maxIdle: number;
  readonly #idle: NativeDecoder[] = [];
  /** A load under way for `prepare`, taken by the next `acquire`. */
  #preparing: Promise<NativeDecoder> | null = null;

  constructor(addon: SphinxAddon, args: readonly string[], maxIdle: number) {
    this.#addon = addon;
    this.#args = [...args];
    this.#maxIdle = maxIdle;
  }

  get idleCount(): number {
    return this.#idle.length;
  }

  prepare(): void {
    if (this.#idle.length > 0 || this.#preparing) return;
    const loading = this.#addon.load(this.#args);
    this.#preparing = loading;
    loading.then(
      (decoder) => {
        if (this.#preparing !== loading) return;
        this.#preparing = null;
        this.release(decoder);
      },
      () => {
        if (this.#preparing === loading) this.#preparing = null;
      },
    );
  }

  acquire(): Promise<NativeDecoder> {
    const idle = this.#idle.pop();
    if (idle) return Promise.resolve(idle);
    const preparing = this.#preparing;
    this.#preparing = null;
    return preparing ?? this.#addon.load(this.#args);
  }

  release(decoder: NativeDecoder): void {
    if (this.#idle.length < this.#maxIdle) this.#idle.push(decoder);
    else this.#addon.release(decoder);
  }

  /** Frees the idle decoders (those in use are freed when released after this, or collected). */
  drain(): void {
    for (const decoder of this.#idle.splice(0)) this.#addon.release(decoder);
  }

  /** One utterance, decoded while it is fed. */
  utterance(onPartial: (text: string) => void): UtteranceDecoding {
    return new UtteranceDecoding(this.#addon, this, onPartial);
  }
}

/**
 * One utterance on a pooled decoder. `feed` as audio is heard; `finish` once it ended, for the final text;
 * `cancel` to drop it. The decoder goes back to the pool when the utterance is over, either way.
 */
export class UtteranceDecoding {
  readonly #addon: SphinxAddon;
  readonly #pool: SphinxDecoderPool;
  readonly #onPartial: (text: string) => void;
  readonly #decoder: Promise<NativeDecoder>;
  #pending: Int16Array[] = [];
  #pump: Promise<void> | null = null;
  #started = false;
  #lastPartial = '';
  #cancelled = false;
  #failure: unknown;
  #closing: Promise<string> | undefined;

  constructor(addon: SphinxAddon, pool: SphinxDecoderPool, onPartial: (text: string) => void) {
    this.#addon = addon;
    this.#pool = pool;
    this.#onPartial = onPartial;
    this.#decoder = pool.acquire();
    // A failed load is reported by `finish`; until then nobody else awaits it.
    this.#decoder.catch(() => undefined);
  }

  /** Audio of the utterance, in order; the decoder reads it soon after (the array is not kept). */
  feed(samples: Int16Array): void {
    if (this.#cancelled || samples.length === 0) return;
    this.#pending.push(samples);
    this.#pump ??= this.#drain();
  }

  /** The final text, once everything fed is decoded. */
  finish(): Promise<string> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Drops the utterance: no more partials; the decoder returns to the pool once its work in flight is done. */
  cancel(): void {
    this.#cancelled = true;
    this.#pending = [];
    this.#closing ??= this.#close();
    this.#closing.catch(() => undefined);
  }

  /** Ends the utterance once the audio fed is decoded, then returns the decoder to the pool (exactly once). */
  async #close(): Promise<string> {
    const decoder = await this.#decoder;
    try {
      while (this.#pump) await this.#pump;
      if (this.#failure !== undefined) throw this.#failure;
      if (!this.#started) return '';
      const text = await this.#addon.decode(decoder, null, false, true);
      return this.#cancelled ? '' : text.trim();
    } finally {
      this.#pool.release(decoder);
    }
  }

  async #drain(): Promise<void> {
    try {
      const decoder = await this.#decoder;
      while (this.#pending.length > 0 && !this.#cancelled && this.#failure === undefined) {
        const audio = joined(this.#pending.splice(0));
        const start = !this.#started;
        this.#started = true;
        const partial = (await this.#addon.decode(decoder, audio, start, false)).trim();
        if (!this.#cancelled && partial !== '' && partial !== this.#lastPartial) {
          this.#lastPartial = partial;
          this.#onPartial(partial);
        }
      }
    } catch (error) {
      this.#failure = error;
    } finally {
      this.#pump = null;
      if (this.#pending.length > 0 && !this.#cancelled && this.#failure === undefined) {
        this.#pump = this.#drain();
      }
    }
  }
}

function joined(parts: Int16Array[]): Int16Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Int16Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

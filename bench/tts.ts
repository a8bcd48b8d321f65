/**
 * Text-to-speech figures: eSpeak NG load time, real-time factor (synthesis wall time / audio duration) and time
 * to first chunk per catalogue language, through the production path (EspeakSynthesizer on its worker thread)
 * and, for reference, the WASM module driven directly on this thread; then the time to first audio of
 * OpenAI-compatible speech through the `openai` SDK against plain fetch, same fake server, same run.
 *
 *   node --import tsx bench/tts.ts [runs]      (default 5 runs per figure; medians)
 */
import OpenAI from 'openai';
import { CANONICAL_RATE, Resampler } from '../codecs/index.ts';
import { EspeakSynthesizer } from '../engines/tts/providers/espeak.ts';
import { EspeakRuntime } from '../engines/tts/providers/espeak-runtime.ts';
import { loadEspeakWasm } from '../engines/tts/providers/espeak-wasm.ts';
import { OpenAiSynthesizer } from '../engines/tts/providers/openai.ts';
import { FakeOpenAiSpeechServer } from '../engines/tts/testing/fake-openai-speech-server.ts';
import { SENTENCES_BY_LANGUAGE } from '../engines/tts/testing/sentences-by-language.ts';

const RUNS = Number(process.argv[2] ?? 5);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const pad = (value: string | number, width: number) => String(value).padStart(width);

/** Synthesis time, first-chunk time and audio length of one synthesis. */
async function timeOne(
  stream: AsyncIterable<Int16Array>,
): Promise<{ totalMs: number; firstMs: number; audioMs: number }> {
  const start = performance.now();
  let firstMs = Number.NaN;
  let samples = 0;
  for await (const chunk of stream) {
    if (Number.isNaN(firstMs)) firstMs = performance.now() - start;
    samples += chunk.length;
  }
  return { totalMs: performance.now() - start, firstMs, audioMs: (samples / CANONICAL_RATE) * 1000 };
}

async function espeakFigures(): Promise<void> {
  const runtime = new EspeakRuntime();
  const loadStart = performance.now();
  await runtime.warmup();
  console.log(`eSpeak NG worker start + WASM load: ${(performance.now() - loadStart).toFixed(0)} ms`);
  const tts = new EspeakSynthesizer({ runtime });
  const wasm = await loadEspeakWasm();
  console.log(
    `\neSpeak NG, one sentence per language, f3 voice, medians of ${RUNS} runs after one warm-up run`,
  );
  console.log(
    `${'lang'.padEnd(5)} ${pad('audio ms', 9)} ${pad('RTF', 7)} ${pad('first ms', 9)} ${pad('direct RTF', 11)}`,
  );
  const rtfs: number[] = [];
  for (const [language, text] of Object.entries(SENTENCES_BY_LANGUAGE)) {
    const voice = `${language}+f3`;
    const runs: { totalMs: number; firstMs: number; audioMs: number }[] = [];
    const direct: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const run = await timeOne(tts.synthesize({ text, voice, language }));
      wasm.setVoice(voice);
      const start = performance.now();
      let samples = 0;
      wasm.speak(text, (block) => {
        samples += block.length;
        return false;
      });
      const directRtf = (performance.now() - start) / ((samples / wasm.sampleRate) * 1000);
      if (i === 0) continue; // warm-up: first use of a language loads its dictionary
      runs.push(run);
      direct.push(directRtf);
    }
    const rtf = median(runs.map((r) => r.totalMs / r.audioMs));
    rtfs.push(rtf);
    console.log(
      `${language.padEnd(5)} ${pad(median(runs.map((r) => r.audioMs)).toFixed(0), 9)} ${pad(rtf.toFixed(3), 7)} ` +
        `${pad(median(runs.map((r) => r.firstMs)).toFixed(1), 9)} ${pad(median(direct).toFixed(3), 11)}`,
    );
  }
  console.log(`median RTF over languages: ${median(rtfs).toFixed(3)}`);
  await runtime.close();
}

/** Time to the first audio bytes with plain fetch, doing what the SDK does: POST JSON, read the body. */
async function fetchFirstAudio(baseURL: string, text: string): Promise<number> {
  const start = performance.now();
  const response = await fetch(`${baseURL}/audio/speech`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input: text, response_format: 'pcm' }),
  });
  const reader = response.body!.getReader();
  const first = await reader.read();
  const resampler = new Resampler(24_000, 16_000);
  resampler.process(
    new Int16Array(first.value!.buffer, first.value!.byteOffset, first.value!.byteLength >> 1),
  );
  const elapsed = performance.now() - start;
  await reader.cancel();
  return elapsed;
}

/** Time to the first audio bytes through the SDK alone: the same request and first read as `fetchFirstAudio`. */
async function sdkFirstAudio(client: OpenAI, text: string): Promise<number> {
  const start = performance.now();
  const response = await client.audio.speech.create(
    { model: 'tts-1', voice: 'alloy', input: text, response_format: 'pcm' },
    { maxRetries: 0 },
  );
  const reader = response.body!.getReader();
  const first = await reader.read();
  const resampler = new Resampler(24_000, 16_000);
  resampler.process(
    new Int16Array(first.value!.buffer, first.value!.byteOffset, first.value!.byteLength >> 1),
  );
  const elapsed = performance.now() - start;
  await reader.cancel();
  return elapsed;
}

async function sdkFigures(): Promise<void> {
  const server = await FakeOpenAiSpeechServer.start();
  const text = SENTENCES_BY_LANGUAGE['en']!;
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-bench' });
  const provider = new OpenAiSynthesizer({ client, apiKey: 'sk-bench', model: 'tts-1' });
  const variants: Record<string, () => Promise<number>> = {
    fetch: () => fetchFirstAudio(server.baseURL, text),
    sdk: () => sdkFirstAudio(client, text),
    provider: async () => {
      const start = performance.now();
      for await (const _chunk of provider.synthesize({ text, voice: 'alloy', language: 'en' })) break;
      return performance.now() - start;
    },
  };
  const names = Object.keys(variants);
  const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  const rounds = Math.max(50, RUNS * 20);
  for (let i = 0; i < 20; i++) for (const name of names) await variants[name]!();
  for (let i = 0; i < rounds; i++) {
    // Rotate the order so no variant always runs first on a warm connection pool.
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length]!;
      times[name]!.push(await variants[name]!());
    }
  }
  await server.close();
  console.log(`\nTime to first audio, local fake server (0 ms latency, same process), ${rounds} rounds`);
  console.log(
    'fetch: plain fetch + first read; sdk: the openai SDK + first read; provider: OpenAiSynthesizer first chunk',
  );
  for (const name of names) {
    const values = times[name]!;
    console.log(
      `${name.padEnd(9)} p50 ${median(values).toFixed(2)} ms  p90 ${quantile(values, 0.9).toFixed(2)} ms`,
    );
  }
  const overhead = median(times['sdk']!) - median(times['fetch']!);
  console.log(`SDK overhead over fetch (p50 difference): ${overhead.toFixed(2)} ms`);
}

await espeakFigures();
await sdkFigures();

/**
 * `npm run bench:conversation [-- --json] [--concurrency 3] [--only <id prefix>] [--behavior name=value]`:
 * turn-taking as a caller hears it. Scripted callers (bench/conversation/corpus.ts: English, Hindi and Hinglish
 * speech by eSpeak NG, pauses, noise bursts) are played in real time through web calls into a started platform
 * (`voiceagent serve`, every role, SQLite), whose engines are fakes on loopback that behave like the real
 * ones: a Deepgram-compatible live STT that times its messages from the audio it receives
 * (bench/conversation/scripted-stt.ts), an OpenAI-compatible chat model (first token after 300 ms, then 50
 * tokens/s) and OpenAI-compatible speech (first audio after 100 ms). Each call is judged by what the caller
 * heard (bench/conversation/judge.ts). Also printed: how many answers the platform started before the turn was
 * confirmed, used and discarded (its `/metrics`; the warm-up call counts too): the model requests early starts
 * add. With `--json`, the last line is the summary as one JSON object.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeOpenAiServer } from '../engines/llm/testing/fake-openai-server.ts';
import { FakeDeepgramServer } from '../engines/stt/testing/fake-deepgram-server.ts';
import { espeakInstalled } from '../engines/stt/testing/speech.ts';
import { FakeOpenAiSpeechServer } from '../engines/tts/testing/fake-openai-speech-server.ts';
import { FAKE_ENGINES_VOICE } from './calls/fake-engines.ts';
import { platformEnv } from './calls/platform-env.ts';
import { freePort, PlatformProcess } from './calls/platform-process.ts';
import { createAgents, provisionWorkspaces } from './calls/workspaces.ts';
import { CORPUS, type ConversationCase } from './conversation/corpus.ts';
import { type CaseObservation, judge, summarize, type Verdict } from './conversation/judge.ts';
import { type RenderedPart, renderCase } from './conversation/render.ts';
import { ScriptedRecognizer } from './conversation/scripted-stt.ts';
import { type Interval, WebCaller } from './conversation/web-caller.ts';
import { Cleanups } from './support/cleanups.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Engine speeds, as `bench:pipeline` has them. */
const LLM_FIRST_TOKEN_MS = 300;
const LLM_TOKENS_PER_SECOND = 50;
const TTS_FIRST_AUDIO_MS = 100;
/** Network and processing time of every STT message. */
const STT_LATENCY_MS = 40;

const REPLY = 'Sure, I can help you with that. Let me look at it right away.';
/** Long enough that a caller 1.5 s into it is mid-sentence and 4 s later it still plays. */
const LONG_OPENING =
  'Hello Ravi, this is Asha calling from Acme about your table booking for this weekend at our restaurant.';
const SHORT_OPENING = 'Hello Ravi, how can I help?';

const JOIN_TIMEOUT_MS = 15_000;
const OPENING_TIMEOUT_MS = 20_000;
/** Silence after the opening before the caller starts, when it speaks after it. */
const AFTER_OPENING_QUIET_MS = 600;
const DURING_OPENING_MS = 1500;
/** The caller stays on this long after its last sound, for the agent's answer (or lack of one). */
const TAIL_MS = 3000;
/** A silent caller's own script is the wait: its call ends before the agent's re-prompt (6 s) is due. */
const SILENCE_TAIL_MS = 300;

interface Options {
  json: boolean;
  concurrency: number;
  only: string | undefined;
  /** Agent `behavior` settings to run with (`--behavior adaptive_interruptions=false`), e.g. the other side of
   * the backchannel / barge-in trade-off. */
  behavior: Record<string, string | number | boolean>;
}

function behaviorValue(raw: string): string | number | boolean {
  if (raw === 'true' || raw === 'false') return raw === 'true';
  const n = Number(raw);
  return raw !== '' && Number.isFinite(n) ? n : raw;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { json: false, concurrency: 3, only: undefined, behavior: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') options.json = true;
    else if (arg === '--concurrency') options.concurrency = Math.max(1, Math.min(8, Number(argv[++i]) || 1));
    else if (arg === '--only') options.only = argv[++i];
    else if (arg === '--behavior') {
      const [name, value] = (argv[++i] ?? '').split('=');
      if (!name || value === undefined) throw new Error('--behavior takes name=value');
      options.behavior[name] = behaviorValue(value);
    } else throw new Error(`unknown option ${arg}`);
  }
  return options;
}

/** One holder at a time (call set-up, so each STT connection is matched to its call's script). */
class Lock {
  #tail: Promise<void> = Promise.resolve();
  async hold<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.#tail;
    let release = (): void => {};
    this.#tail = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await work();
    } finally {
      release();
    }
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Bench {
  apiUrl: string;
  apiKey: string;
  agents: { long: string; short: string };
  recognizers: ScriptedRecognizer[];
  setup: Lock;
}

async function placeCall(bench: Bench, c: ConversationCase, rendered: RenderedPart[]): Promise<WebCaller> {
  return bench.setup.hold(async () => {
    const before = bench.recognizers.length;
    const agentId = 'after' in c.start ? bench.agents.short : bench.agents.long;
    const response = await fetch(`${bench.apiUrl}/v2/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bench.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'web', agent_id: agentId, variables: { name: 'Ravi' } }),
    });
    const body = (await response.json()) as { web?: { url?: string } };
    if ((response.status !== 201 && response.status !== 202) || !body.web?.url)
      throw new Error(
        `placing the web call answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`,
      );
    const caller = await WebCaller.join(body.web.url, JOIN_TIMEOUT_MS);
    await waitFor(
      () => bench.recognizers.length > before,
      JOIN_TIMEOUT_MS,
      'the call to open its STT stream',
    );
    (bench.recognizers[before] as ScriptedRecognizer).expect(
      rendered.flatMap((r) => (r.utterance ? [r.utterance] : [])),
    );
    return caller;
  });
}

async function runCase(
  bench: Bench,
  c: ConversationCase,
  rendered: RenderedPart[],
): Promise<CaseObservation> {
  const overAgent = !('after' in c.start);
  const observation: CaseObservation = {
    id: c.id,
    category: c.category,
    overAgent,
    beganMs: 0,
    sounds: [],
    heard: [],
    clears: [],
  };
  let caller: WebCaller | undefined;
  try {
    caller = await placeCall(bench, c, rendered);
    if ('after' in c.start) await caller.quietAfterFirstTurn(AFTER_OPENING_QUIET_MS, OPENING_TIMEOUT_MS);
    else await caller.heardAtLeast(c.start.intoOpeningMs ?? DURING_OPENING_MS, OPENING_TIMEOUT_MS);
    // Queued at once, so the parts follow each other frame by frame.
    const said = rendered.map((r) => caller?.say(r.audio) as Promise<Interval>);
    const tail = caller.listen(c.category === 'silence' ? SILENCE_TAIL_MS : TAIL_MS);
    const spans = await Promise.all(said);
    await tail;
    observation.beganMs = spans[0]?.startMs ?? 0;
    observation.sounds = spans.filter((_, i) => rendered[i]?.utterance);
  } catch (error) {
    observation.error = error instanceof Error ? error.message : String(error);
  } finally {
    await caller?.hangUp();
  }
  if (caller && process.env['BENCH_CONVERSATION_TRACE']) {
    const t0 = observation.sounds[0]?.startMs ?? 0;
    const trace = caller.record.events.map((e) => `${Math.round(e.atMs - t0)} ${JSON.stringify(e.detail)}`);
    process.stderr.write(
      `${c.id} sounds ${JSON.stringify(observation.sounds.map((s) => [s.startMs - t0, s.endMs - t0]))}\n  ${trace.join('\n  ')}\n`,
    );
  }
  if (caller) {
    observation.heard = caller.record.heard;
    observation.clears = caller.record.clears;
    const onset = observation.sounds[0]?.startMs;
    const firstWord = caller.record.events.find(
      (e) =>
        onset !== undefined &&
        e.atMs >= onset &&
        (e.type === 'transcript.partial' || e.type === 'transcript.final') &&
        String(e.detail['text'] ?? '').trim() !== '',
    );
    if (firstWord) observation.firstWordAtMs = firstWord.atMs;
  }
  return observation;
}

/** Categories taken in turn, so no category runs all at once (at the start, or when the machine is busiest). */
function interleaved(cases: readonly ConversationCase[]): ConversationCase[] {
  const byCategory = new Map<string, ConversationCase[]>();
  for (const c of cases) byCategory.set(c.category, [...(byCategory.get(c.category) ?? []), c]);
  const queues = [...byCategory.values()];
  const out: ConversationCase[] = [];
  while (out.length < cases.length)
    for (const queue of queues) if (queue.length > 0) out.push(queue.shift() as ConversationCase);
  return out;
}

async function runAll(
  bench: Bench,
  cases: readonly ConversationCase[],
  concurrency: number,
  log: (l: string) => void,
) {
  const verdicts: Verdict[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < cases.length; i = next++) {
      const c = cases[i] as ConversationCase;
      const verdict = judge(await runCase(bench, c, renderCase(c, i + 1)));
      verdicts.push(verdict);
      log(formatVerdict(verdict));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return verdicts;
}

function formatVerdict(v: Verdict): string {
  const figures = [
    v.responseLatencyMs !== undefined ? `response ${Math.round(v.responseLatencyMs)} ms` : '',
    v.stopMs !== undefined ? `stop ${Math.round(v.stopMs)} ms` : '',
    v.firstWordMs !== undefined ? `first word ${Math.round(v.firstWordMs)} ms` : '',
    v.gapMs !== undefined ? `gap ${Math.round(v.gapMs)} ms` : '',
  ].filter(Boolean);
  return `${v.correct ? 'ok  ' : 'FAIL'} ${v.id.padEnd(28)} ${v.why}${figures.length ? ` (${figures.join(', ')})` : ''}`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!espeakInstalled())
    throw new Error('bench:conversation needs the espeak-ng command (Debian: espeak-ng)');
  const cases = CORPUS.filter((c) => !options.only || c.id.startsWith(options.only));
  const log = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  const cleanups = new Cleanups((line) => process.stderr.write(`${line}\n`));
  const onSignal = (): void => void cleanups.runAll().then(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const recognizers: ScriptedRecognizer[] = [];
    const stt = await FakeDeepgramServer.start({
      latencyMs: STT_LATENCY_MS,
      recognizer: (query) => {
        const recognizer = new ScriptedRecognizer(query);
        recognizers.push(recognizer);
        return recognizer;
      },
    });
    cleanups.defer('stop the fake STT', () => stt.close());
    const llm = await FakeOpenAiServer.start({
      firstTokenLatencyMs: LLM_FIRST_TOKEN_MS,
      tokensPerSecond: LLM_TOKENS_PER_SECOND,
      reply: { text: REPLY },
    });
    cleanups.defer('stop the fake model', () => llm.close());
    const tts = await FakeOpenAiSpeechServer.start({ firstByteDelayMs: TTS_FIRST_AUDIO_MS });
    cleanups.defer('stop the fake speech', () => tts.close());

    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-bench-conversation-'));
    cleanups.defer(`remove ${dataDir}`, () => rmSync(dataDir, { recursive: true, force: true }));
    const [workspace] = await provisionWorkspaces({ DATA_DIR: dataDir }, 1);
    if (!workspace) throw new Error('no workspace provisioned');
    const [apiPort, gatewayPort] = [await freePort(), await freePort()];
    const platform = PlatformProcess.launch({
      name: 'api,gateway,worker',
      roles: ['api', 'gateway', 'worker'],
      root: ROOT,
      env: platformEnv({
        DATA_DIR: dataDir,
        SECRET_KEY: randomBytes(32).toString('hex'),
        PORT: String(apiPort),
        GATEWAY_PORT: String(gatewayPort),
        STT_PROVIDER: 'deepgram',
        STT_BASE_URL: stt.baseUrl,
        STT_API_KEY: 'bench',
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: llm.baseURL,
        LLM_API_KEY: 'bench',
        LLM_MODEL: 'fake-model',
        TTS_BASE_URL: tts.baseURL,
        TTS_API_KEY: 'bench',
      }),
      startTimeoutMs: 60_000,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    cleanups.defer('stop the platform', () => platform.stop());
    await platform.serving();
    const apiUrl = platform.apiUrl as string;
    const agent = (first_message: string) =>
      createAgents(apiUrl, [workspace], {
        voice: FAKE_ENGINES_VOICE,
        first_message,
        max_duration_secs: 60,
        ...(Object.keys(options.behavior).length > 0 ? { behavior: options.behavior } : {}),
      });
    const [[long], [short]] = await Promise.all([agent(LONG_OPENING), agent(SHORT_OPENING)]);
    if (!long || !short) throw new Error('no agents created');
    const bench: Bench = {
      apiUrl,
      apiKey: workspace.apiKey,
      agents: { long: long.agentId, short: short.agentId },
      recognizers,
      setup: new Lock(),
    };
    // One call first, not judged: the platform's first call pays for connections and code loading.
    const warmUp = CORPUS.find((c) => c.category === 'endpoint') as ConversationCase;
    await runCase(bench, warmUp, renderCase(warmUp, 0));
    const began = performance.now();
    const behavior =
      Object.keys(options.behavior).length > 0 ? `, behavior ${JSON.stringify(options.behavior)}` : '';
    log(
      `bench:conversation: ${cases.length} scripted calls, ${options.concurrency} at a time${behavior}; ` +
        `load average ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} on ${os.cpus().length} CPUs`,
    );
    const verdicts = await runAll(bench, interleaved(cases), options.concurrency, log);
    const summary = summarize(verdicts);
    log(
      `took ${Math.round((performance.now() - began) / 1000)} s; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const [category, pct] of Object.entries(summary.correct_pct))
      log(`  ${category.padEnd(20)} ${pct ?? '-'} % correct`);
    log(
      `  response latency p50 ${summary.response_latency_p50_ms} ms, p95 ${summary.response_latency_p95_ms} ms; ` +
        `barge-in stop p50 ${summary.bargein_stop_p50_ms} ms, p95 ${summary.bargein_stop_p95_ms} ms ` +
        `(${summary.bargein_not_stopped} not stopped; the STT's first word p50 ${summary.bargein_first_word_p50_ms} ms, ` +
        `p95 ${summary.bargein_first_word_p95_ms} ms); backchannel gap max ${summary.backchannel_gap_max_ms} ms ` +
        `(gap before the caller spoke, max ${summary.undisturbed_gap_max_ms} ms)`,
    );
    const early = await speculativeReplies(apiUrl);
    log(
      `  answers started before the turn was confirmed: ${early.started} started, ${early.used} used, ` +
        `${early.discarded} discarded (the model requests an early start added: ` +
        `${early.discarded} over ${cases.length + 1} calls)`,
    );
    if (options.json)
      log(
        JSON.stringify({
          ...summary,
          speculative_started: early.started,
          speculative_used: early.used,
          speculative_discarded: early.discarded,
        }),
      );
  } finally {
    await cleanups.runAll();
  }
}

/** The platform's count of answers started before the turn was confirmed, by outcome (its `/metrics`). */
async function speculativeReplies(
  apiUrl: string,
): Promise<{ started: number; used: number; discarded: number }> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const total = (outcome: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`pipeline_speculative_replies_total{outcome="${outcome}"`))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return { started: total('started'), used: total('used'), discarded: total('discarded') };
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:conversation failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});

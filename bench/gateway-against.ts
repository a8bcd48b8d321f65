/**
 * CPU per gateway frame pair, for this checkout and another revision side by side: one Twilio media message
 * through `MediaSession.receive` with the echo handler (JSON, base64, G.711, 8<->16 kHz, framing, telemetry;
 * transport a no-op), as bench/gateway-parts.ts times it. Each measurement is a fresh process of one build that
 * warms up, then times `--frames` messages by its own CPU time (start-up and module loading left out); the builds
 * take turns for `--rounds` rounds, so a change in the machine's load reaches both, and each build's figure is its
 * median. The spread of its rounds is the noise.
 *
 *   npm run bench:gateway-against -- [--against REV] [--frames 200000] [--rounds 7] [--json]
 *
 * `--against` (default: the first parent of HEAD) is checked out in a temporary git worktree sharing this
 * checkout's node_modules. With `--json` the last line is one JSON object.
 *
 * (Instruction counts under callgrind were tried first: for Node they vary by tens of per cent between runs of
 * one build, with the JIT's code placement, so they cannot tell a few per cent apart.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: 'HEAD^' },
    frames: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '7' },
    json: { type: 'boolean', default: false },
    inner: { type: 'boolean', default: false },
    root: { type: 'string' },
  },
  strict: true,
});
const frames = Number(values.frames);
const rounds = Number(values.rounds);
if (!Number.isSafeInteger(frames) || frames < 1_000 || frames > 10_000_000) {
  console.error('bench:gateway-against: --frames must be a whole number from 1000 to 10000000');
  process.exit(2);
}
if (!Number.isSafeInteger(rounds) || rounds < 1 || rounds > 50) {
  console.error('bench:gateway-against: --rounds must be a whole number from 1 to 50');
  process.exit(2);
}
/** Messages before the timed ones: the JIT settles over the first ~10^5 calls. */
const WARMUP_FRAMES = 100_000;

/** Feeds media messages to one session of the build at `root`; prints the CPU µs of each of the last `count`. */
async function inner(root: string, count: number): Promise<void> {
  const load = (relative: string) => import(pathToFileURL(path.join(root, relative)).href);
  const echoPath = existsSync(path.join(root, 'gateway/testing/echo-handler.ts'))
    ? 'gateway/testing/echo-handler.ts'
    : 'gateway/handlers/echo.ts';
  const [
    { pino },
    { Registry },
    codecs,
    clock,
    carriers,
    limits,
    session,
    metrics,
    pacing,
    audio,
    echo,
    loadGenerator,
    tokens,
  ] = await Promise.all([
    import('pino'),
    import('prom-client'),
    load('codecs/index.ts'),
    load('core/clock.ts'),
    load('gateway/carriers/index.ts'),
    load('gateway/limits.ts'),
    load('gateway/media-session.ts'),
    load('gateway/metrics.ts'),
    load('gateway/pacer.ts'),
    load('gateway/testing/audio.ts'),
    load(echoPath),
    load('gateway/testing/load-generator.ts'),
    load('gateway/tokens.ts'),
  ]);
  const streamTokens = new tokens.StreamTokens({
    secret: 'gateway-benchmark-secret-0123456789abcdef',
    claims: new tokens.MemoryTokenClaims(),
  });
  const pacer = new pacing.Pacer();
  const media = Buffer.from(
    JSON.stringify({
      event: 'media',
      streamSid: 'MZ00000000000000000000000000bench',
      media: {
        track: 'inbound',
        payload: Buffer.from(codecs.mulawEncode(audio.sine(8000, 440, 160))).toString('base64'),
      },
    }),
  );
  const s = new session.MediaSession({
    carrier: 'twilio',
    adapter: carriers.MEDIA_ADAPTERS.twilio({
      query: new URLSearchParams(),
      pathCallId: undefined,
      newStreamId: () => 's',
    }),
    transport: {
      send: () => 'sent',
      bufferedAmount: () => 0,
      cork: (fn: () => void) => fn(),
      close: () => {},
    },
    tokens: streamTokens,
    handlerFactory: echo.echoHandler,
    metrics: new metrics.GatewayMetrics(new Registry()),
    pacer,
    logger: pino({ level: 'silent' }),
    clock: clock.systemClock,
    limits: {
      ...limits.DEFAULT_STREAM_LIMITS,
      messagesPerSec: 1e9,
      messageBurst: 1e9,
      bytesPerSec: 1e12,
      byteBurst: 1e12,
    },
    urlToken: undefined,
    statedCallId: undefined,
    onEnd: () => {},
  });
  s.open();
  s.receive(
    Buffer.from(loadGenerator.twilioStartText(streamTokens.mint('call_parts', 'twilio', 600_000))),
    false,
  );
  await new Promise((resolve) => setTimeout(resolve, 10));
  const feed = (messages: number) => {
    for (let i = 1; i <= messages; i++) {
      s.receive(media, false);
      if (i % 50 === 0) s.housekeeping(performance.now());
    }
  };
  feed(WARMUP_FRAMES);
  const before = process.cpuUsage();
  feed(count);
  const used = process.cpuUsage(before);
  s.close('normal');
  pacer.close();
  console.log(JSON.stringify({ us_per_frame_pair: (used.user + used.system) / count }));
}

/** One measurement: a fresh process of the build at `root`. */
function usPerFrame(root: string): number {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--inner', `--root=${root}`, `--frames=${frames}`],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`the measurement failed (${run.status}): ${run.stderr.slice(-2000)}`);
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  return (JSON.parse(last) as { us_per_frame_pair: number }).us_per_frame_pair;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

if (values.inner) {
  await inner(values.root ?? ROOT, frames);
} else {
  const git = (...args: string[]) => {
    const run = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
    return run.stdout.trim();
  };
  const here = git('rev-parse', '--short', 'HEAD');
  const against = git('rev-parse', '--short', values.against);
  const other = mkdtempSync(path.join(os.tmpdir(), 'bench-against-'));
  try {
    git('worktree', 'add', '--detach', other, against);
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(other, 'node_modules'));
    const theirs: number[] = [];
    const ours: number[] = [];
    for (let round = 0; round < rounds; round++) {
      theirs.push(usPerFrame(other));
      ours.push(usPerFrame(ROOT));
    }
    const spread = (values: number[]) =>
      Number(((Math.max(...values) - Math.min(...values)) / median(values)).toFixed(3));
    const round3 = (us: number) => Number(us.toFixed(3));
    const result = {
      frames,
      rounds,
      against,
      against_us_per_frame_pair: round3(median(theirs)),
      against_spread: spread(theirs),
      here,
      us_per_frame_pair: round3(median(ours)),
      spread: spread(ours),
      ratio: Number((median(ours) / median(theirs)).toFixed(3)),
      load_average: os.loadavg().map((l) => Number(l.toFixed(2))),
    };
    console.log(
      `gateway frame pair, CPU µs (median of ${rounds} rounds, spread max-min/median): ${against} ${result.against_us_per_frame_pair} (${result.against_spread}), ${here} ${result.us_per_frame_pair} (${result.spread}); ratio ${result.ratio}; load ${result.load_average.join(' ')}`,
    );
    if (values.json) console.log(JSON.stringify(result));
  } finally {
    spawnSync('git', ['worktree', 'remove', '--force', other], { cwd: ROOT });
    rmSync(other, { recursive: true, force: true });
  }
}

/**
 * Instructions per gateway frame pair, counted by callgrind, for this checkout and another revision side by side:
 * one Twilio media message through `MediaSession.receive` with the echo handler (JSON, base64, G.711, 8<->16 kHz,
 * framing, telemetry, outbound pacing; transport a no-op), as bench/gateway-parts.ts times it. Instruction counts
 * do not depend on what else the machine is doing, so two builds compare on a busy machine too, where CPU-time
 * benchmarks of a few per cent mean nothing.
 *
 *   npm run bench:gateway-instructions -- [--against REV] [--frames 20000] [--json]
 *
 * Each build runs twice under `valgrind --tool=callgrind`, with `--frames` and twice as many messages; the
 * difference over `--frames` is the count per frame pair with start-up, module loading and the JIT's warm-up left
 * out. `--against` (default: the first parent of HEAD) is checked out in a temporary git worktree sharing this
 * checkout's node_modules. With `--json` the last line is one JSON object.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: 'HEAD^' },
    frames: { type: 'string', default: '20000' },
    json: { type: 'boolean', default: false },
    inner: { type: 'boolean', default: false },
    root: { type: 'string' },
  },
  strict: true,
});
const frames = Number(values.frames);
if (!Number.isSafeInteger(frames) || frames < 1_000 || frames > 1_000_000) {
  console.error('bench:gateway-instructions: --frames must be a whole number from 1000 to 1000000');
  process.exit(2);
}

/** Feeds `count` media messages to one session of the build at `root` (the process valgrind counts). */
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
  for (let i = 1; i <= count; i++) {
    s.receive(media, false);
    if (i % 50 === 0) s.housekeeping(performance.now());
  }
  s.close('normal');
  pacer.close();
}

/** Instructions callgrind counted for `count` messages through the build at `root`. */
function instructions(root: string, count: number): number {
  const out = path.join(os.tmpdir(), `callgrind-${process.pid}-${Date.now()}.out`);
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}`,
      process.execPath,
      // V8 compiles and collects on its own threads, and sizes its heap by the allocation rate it measures over
      // wall time, which valgrind slows by its own load: predictable mode (one thread, a fixed collection
      // schedule) makes the count repeat.
      '--predictable',
      '--predictable-gc-schedule',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--inner',
      `--root=${root}`,
      `--frames=${count}`,
    ],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (run.status !== 0) throw new Error(`valgrind failed (${run.status}): ${run.stderr.slice(-2000)}`);
  const summary = /^summary:\s+(\d+)/m.exec(readFileSync(out, 'utf8'));
  rmSync(out, { force: true });
  if (!summary?.[1]) throw new Error('no summary in the callgrind output');
  return Number(summary[1]);
}

function perFrame(root: string): number {
  const once = instructions(root, frames);
  const twice = instructions(root, 2 * frames);
  return (twice - once) / frames;
}

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
    const current = perFrame(ROOT);
    const base = perFrame(other);
    const result = {
      frames,
      against,
      against_instructions_per_frame_pair: Math.round(base),
      here,
      instructions_per_frame_pair: Math.round(current),
      ratio: Number((current / base).toFixed(4)),
    };
    console.log(
      `gateway frame pair (callgrind): ${against} ${result.against_instructions_per_frame_pair} instructions, ${here} ${result.instructions_per_frame_pair} (x${result.ratio})`,
    );
    if (values.json) console.log(JSON.stringify(result));
  } finally {
    spawnSync('git', ['worktree', 'remove', '--force', other], { cwd: ROOT });
    rmSync(other, { recursive: true, force: true });
  }
}

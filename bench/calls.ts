/**
 * Calls end to end: how fast `POST /v2/calls` admits, and what live conversational calls cost
 * (docs/architecture.md, "Performance budgets").
 *
 *   npm run bench:calls -- [--json] [--runs 3] [--calls 100] [--concurrency 32] [--duration 10] [--warmup 2]
 *                          [--workspaces N] [--deadline 420] [--only admissions|conversations|pool]
 *                          [--engines fake|configured] [--timeline] [--max-calls N]
 *
 * Admissions: per run a fresh platform process (`node bin/voiceagent.js serve --roles api`, SQLite in a new
 * DATA_DIR) with enough funded sandbox workspaces that no queue fills; this process drives `POST /v2/calls`
 * over keep-alive connections, closed loop, spread over the workspaces' keys. Only 202s count. The server's
 * CPU comes from /proc/<pid>/stat over the measured window, this process's from `process.cpuUsage()`.
 *
 * Conversations: per run `--calls` calls to a sandbox number whose callee converses, placed at once over
 * `--calls / 5` workspaces (the dialer keeps 5 live per workspace), then followed until all have ended. With
 * DATABASE_URL and REDIS_URL set, the platform runs as `api,gateway` (measured) and `worker` (the dialer and
 * the simulated callees: the load generator) on a fresh schema and Redis prefix; otherwise as one process on
 * SQLite, callees included. The calls run on fixed-latency fake remote engines in a process of their own
 * (`--engines fake`, the default) or on the engines this environment configures (`--engines configured`).
 * Reported: completed calls, voice to voice and pipeline overhead from the calls' own latency summaries, CPU of
 * the measured process per second of live call (over the whole window, and while every call was live) and of
 * the child processes it ran (a local STT decoder), the load generator's and the engines' CPU, memory growth
 * per call. `--timeline` prints live calls and CPU at every poll. The gateway runs with its admission limit
 * (`GATEWAY_MAX_CALLS`: `--max-calls`, else the node's default on this machine): calls beyond it wait in
 * `queued` and run as others end; reported are the limit, whether the live calls stayed within it, the most
 * calls held queued at once, and any refused at the gateway. `--calls 300` on one node shows the limit holding
 * while the admitted calls keep their latency; `--calls 100 --max-calls 100` shows 100 calls at once.
 *
 * Pool: one workspace rents 20 numbers, groups them in one pool, and 500 calls are admitted on it at
 * `--concurrency`: admissions per second, and the most attempts any number took this hour against its pace.
 *
 * Figures are medians over the runs, with the machine's load. With `--json` the last line of stdout is one
 * JSON object. Every process started is stopped and every directory, schema and Redis key created is removed,
 * on failure and on SIGINT/SIGTERM too.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AdmissionRun, admissionWorkspaces, runAdmissions } from './calls/admissions.ts';
import { conversationMode } from './calls/conversation-platform.ts';
import { type ConversationRun, runConversations } from './calls/conversations.ts';
import { type BenchOptions, parseOptions, USAGE } from './calls/options.ts';
import { POOL_CALLS, POOL_NUMBERS, type PoolRun, runPoolAdmissions } from './calls/pool-admissions.ts';
import { admissionsText, conversationsText, jsonLine } from './calls/report.ts';
import { fixed } from './calls/stats.ts';
import {
  type AdmissionSummary,
  type ConversationSummary,
  summariseAdmissions,
  summariseConversations,
} from './calls/summaries.ts';
import { measureCallFloors } from './pipeline-floors.ts';
import { Cleanups } from './support/cleanups.ts';
import { loadAverage } from './support/proc-stat.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

const cleanups = new Cleanups(log);

/** Silero batches the windows of all live streams at once; beyond this the floor's batch size barely matters. */
const SILERO_FLOOR_MAX_BATCH = 32;

/** A hard bound on the whole benchmark: every start, window, deadline and stop with slack. */
function budgetMs(options: BenchOptions): number {
  const start = options.startTimeoutS * 1000 + 60_000;
  const admissions = (options.warmupS + options.durationS) * 1000 + 60_000 + start;
  const conversations = options.deadlineS * 1000 + 60_000 + start;
  const pool = start + 120_000;
  return 60_000 + options.runs * (admissions + conversations) + pool;
}

async function benchAdmissions(options: BenchOptions): Promise<AdmissionSummary> {
  const runs: AdmissionRun[] = [];
  for (let run = 1; run <= options.runs; run++) {
    log(
      `admissions run ${run}/${options.runs}: starting the api process (${admissionWorkspaces(options)} workspaces)`,
    );
    const result = await runAdmissions(options, cleanups, log);
    runs.push(result);
    log(
      `admissions run ${run}/${options.runs}: ${fixed(result.perSecond, 0)}/s, p50 ${fixed(result.p50Ms, 2)} ms, ` +
        `p99 ${fixed(result.p99Ms, 2)} ms, non-202 ${Object.values(result.refused).reduce((a, b) => a + b, 0)}, ` +
        `server CPU ${fixed(result.serverCpuPct, 0)}%, load generator CPU ${fixed(result.loadgenCpuPct, 0)}%, ` +
        `machine ${fixed(result.machineCpuPct, 0)}%, load average ${loadAverage()}`,
    );
  }
  return summariseAdmissions(runs);
}

async function benchConversations(options: BenchOptions): Promise<ConversationSummary> {
  const runs: ConversationRun[] = [];
  for (let run = 1; run <= options.runs; run++) {
    log(`conversations run ${run}/${options.runs}: starting the platform (${conversationMode()} mode)`);
    const result = await runConversations(options, cleanups, log);
    runs.push(result);
    log(
      `conversations run ${run}/${options.runs}: ${result.completed}/${result.placed} completed ` +
        `${JSON.stringify(result.byStatus)} in ${fixed(result.windowS, 0)} s, live peak ${result.livePeak} ` +
        `(limit ${result.maxCalls}, held queued at most ${result.heldPeak}, refused at the gateway ${result.refusedAtCapacity}), ` +
        `voice to voice p50 ${fixed(result.voiceToVoiceP50Ms, 0)} ms p95 ${fixed(result.voiceToVoiceP95Ms, 0)} ms, ` +
        `overhead p95 ${fixed(result.overheadP95Ms, 1)} ms, ` +
        `measured CPU ${fixed(result.measured.cpu.ownMs / result.liveSeconds, 1)} ms per call-second, ` +
        `load average ${loadAverage()}`,
    );
  }
  const summary = summariseConversations(runs);
  if (!options.cpuParts) return summary;
  log('conversations: measuring the floors (Silero inference alone, resampling alone) in this process');
  // As many streams batched as calls were live at once, within what the VAD batches.
  return { ...summary, floors: await measureCallFloors(Math.min(summary.livePeak, SILERO_FLOOR_MAX_BATCH)) };
}

async function benchPool(options: BenchOptions): Promise<PoolRun> {
  log(`pool: starting the api process; ${POOL_NUMBERS} numbers, ${POOL_CALLS} calls`);
  const run = await runPoolAdmissions(options, cleanups, log);
  log(
    `pool: ${fixed(run.perSecond, 0)} admissions/s, ${run.admitted} admitted, refused ${JSON.stringify(run.refused)}, ` +
      `most per number ${run.maxPerNumber} (API: ${run.maxAttemptsThisHour}) of a pace of ${run.pace}`,
  );
  return run;
}

function poolText(run: PoolRun): string {
  const within = run.maxPerNumber <= run.pace && run.maxAttemptsThisHour <= run.pace;
  return [
    `Pool: ${POOL_CALLS} calls on a ${POOL_NUMBERS}-number pool`,
    `  admissions per second      ${fixed(run.perSecond, 0)}`,
    `  admitted                   ${run.admitted} (refused ${JSON.stringify(run.refused)})`,
    `  most attempts per number   ${Math.max(run.maxPerNumber, run.maxAttemptsThisHour)} this hour, pace ${run.pace} (${within ? 'within' : 'OVER'})`,
  ].join('\n');
}

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2), ROOT);
  } catch (error) {
    log(`bench:calls: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  const watchdogMs = budgetMs(options);
  const watchdog = setTimeout(() => {
    log(`bench:calls: still running after ${Math.round(watchdogMs / 1000)} s; stopping everything`);
    void cleanups.runAll().finally(() => process.exit(1));
  }, watchdogMs);
  watchdog.unref();

  const machine = { cpus: os.cpus().length, loadAvgStart: loadAverage(), loadAvgEnd: '' };
  log(`bench:calls: ${machine.cpus} CPUs, load average ${machine.loadAvgStart}`);
  try {
    const admissions = options.parts.includes('admissions') ? await benchAdmissions(options) : undefined;
    const conversations = options.parts.includes('conversations')
      ? await benchConversations(options)
      : undefined;
    const pool = options.parts.includes('pool') ? await benchPool(options) : undefined;
    machine.loadAvgEnd = loadAverage();

    const sections: string[] = [];
    if (admissions) sections.push(admissionsText(admissions, options));
    if (conversations) sections.push(conversationsText(conversations, options));
    if (pool) sections.push(poolText(pool));
    sections.push(
      `${machine.cpus} CPUs; load average (1, 5, 15 min) at start ${machine.loadAvgStart}, at end ${machine.loadAvgEnd}`,
    );
    process.stdout.write(`\n${sections.join('\n\n')}\n`);
    if (options.json) {
      const line = JSON.parse(jsonLine(admissions, conversations, options, machine)) as Record<
        string,
        unknown
      >;
      const poolFigures = pool && {
        pool_admissions_per_s: Math.round(pool.perSecond),
        pool_max_attempts_per_number: Math.max(pool.maxPerNumber, pool.maxAttemptsThisHour),
        pool_pace: pool.pace,
      };
      process.stdout.write(`${JSON.stringify({ ...line, ...poolFigures })}\n`);
    }

    const admissionsFlawed =
      admissions !== undefined &&
      (Object.keys(admissions.refused).length > 0 || admissions.ranOutOfWorkspaces);
    const conversationsFlawed =
      conversations !== undefined &&
      (conversations.unfinishedRuns > 0 ||
        Object.keys(conversations.refused).length > 0 ||
        !conversations.limitHeld);
    const poolFlawed =
      pool !== undefined &&
      (pool.maxPerNumber > pool.pace || pool.maxAttemptsThisHour > pool.pace || pool.admitted !== POOL_CALLS);
    return admissionsFlawed || conversationsFlawed || poolFlawed ? 1 : 0;
  } finally {
    clearTimeout(watchdog);
    await cleanups.runAll();
  }
}

let signalled = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    signalled = true;
    log(`bench:calls: ${signal}; stopping everything`);
    void cleanups.runAll().finally(() => process.exit(130));
  });
}

main()
  .then((code) => {
    process.exitCode = code;
  })
  .catch(async (error: unknown) => {
    // After a signal the processes are being stopped on purpose; what that breaks is not the failure to report.
    if (signalled) return;
    log(`bench:calls failed: ${error instanceof Error ? error.message : String(error)}`);
    await cleanups.runAll();
    process.exitCode = 1;
  });

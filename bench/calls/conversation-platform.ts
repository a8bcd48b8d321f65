import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Cleanups } from '../support/cleanups.ts';
import { deleteRedisKeys, dropSchema, uniqueName } from './backing-services.ts';
import { FAKE_ENGINES_VOICE, type FakeEngines, startFakeEngines } from './fake-engines.ts';
import type { BenchOptions } from './options.ts';
import { engineEnv, platformEnv } from './platform-env.ts';
import { freePort, PlatformProcess } from './platform-process.ts';
import { type BenchWorkspace, createAgents, provisionWorkspaces } from './workspaces.ts';

/**
 * The platform a conversations run places its calls on, ready to dial.
 *
 * `split` (DATABASE_URL and REDIS_URL set): two processes on a fresh PostgreSQL schema and Redis prefix with
 * one SECRET_KEY: `api,gateway`, the process measured, and `worker`, whose dialer and simulated callees (local
 * TTS, Twilio media over WebSockets into the gateway at PUBLIC_GATEWAY_URL) are the load generator.
 * `single`: one process with every role on SQLite, the callees inside it.
 * Either way with `calls / 5` funded sandbox workspaces (the dialer keeps 5 live per workspace), one agent each,
 * and, unless `--engines configured`, the fake engines in a process of their own.
 */

const LIVE_PER_WORKSPACE = 5;

export type ConversationMode = 'split' | 'single';

export interface ConversationPlatform {
  mode: ConversationMode;
  apiUrl: string;
  measured: PlatformProcess;
  /** The load-generating process; undefined in `single` mode, where the measured process holds the callees. */
  worker: PlatformProcess | undefined;
  engines: FakeEngines | undefined;
  workspaces: BenchWorkspace[];
  /** Stops every process (worker first, engines last) and removes the schema, Redis keys and DATA_DIR. */
  stop(): Promise<void>;
}

export function conversationMode(): ConversationMode {
  return process.env['DATABASE_URL'] && process.env['REDIS_URL'] ? 'split' : 'single';
}

interface StoreAndCoordination {
  env: Record<string, string>;
  /** Deletes the Redis keys and drops the schema; for after the processes have stopped. */
  remove(): Promise<void>;
}

/** SQLite in `dataDir`, or (split) a fresh schema and Redis prefix, removed on failure too through `cleanups`. */
function storeAndCoordination(
  mode: ConversationMode,
  dataDir: string,
  cleanups: Cleanups,
): StoreAndCoordination {
  const databaseUrl = process.env['DATABASE_URL'];
  const redisUrl = process.env['REDIS_URL'];
  if (mode === 'single' || !databaseUrl || !redisUrl)
    return { env: { DATA_DIR: dataDir }, remove: async () => {} };
  const name = uniqueName('bench_calls');
  const dropIt = cleanups.defer(`drop schema ${name}`, () => dropSchema(databaseUrl, name));
  const deleteKeys = cleanups.defer(`delete Redis keys ${name}*`, () => deleteRedisKeys(redisUrl, name));
  return {
    env: {
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: name,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: name,
    },
    remove: async () => {
      await deleteKeys();
      await dropIt();
    },
  };
}

/** Both, or the first failure once neither is still starting (so no start outlives the error). */
async function bothStarted<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  return [first.value, second.value];
}

/**
 * `profileDir`, when given, makes the measured process write a CPU profile of its whole life there as it exits
 * (`node --cpu-prof`), named with its pid.
 */
export async function startConversationPlatform(
  options: BenchOptions,
  cleanups: Cleanups,
  log: (line: string) => void,
  profileDir?: string,
): Promise<ConversationPlatform> {
  const mode = conversationMode();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-bench-calls-conversations-'));
  const removeDataDir = cleanups.defer(`remove ${dataDir}`, () =>
    rmSync(dataDir, { recursive: true, force: true }),
  );
  const backing = storeAndCoordination(mode, dataDir, cleanups);
  /** In order: the worker first, so its callees leave before the gateway they stream into goes. */
  const stops: Array<() => Promise<void>> = [];
  let stopEngines = async (): Promise<void> => {};
  const stop = async (): Promise<void> => {
    for (const step of stops) await step();
    await stopEngines();
    await backing.remove();
    await removeDataDir();
  };

  try {
    const provisioned = await provisionWorkspaces(backing.env, Math.ceil(options.calls / LIVE_PER_WORKSPACE));
    const engines =
      options.engines === 'fake'
        ? await startFakeEngines(options.root, platformEnv({}), cleanups)
        : undefined;
    if (engines) stopEngines = engines.stop;
    const [apiPort, gatewayPort] = [await freePort(), await freePort()];
    const shared = {
      ...(engines ? engines.env : engineEnv()),
      ...backing.env,
      SECRET_KEY: randomBytes(32).toString('hex'),
      PORT: String(apiPort),
      GATEWAY_PORT: String(gatewayPort),
      ...(options.maxCalls !== undefined ? { GATEWAY_MAX_CALLS: String(options.maxCalls) } : {}),
    };
    const start = async (
      roles: string[],
      extra: Record<string, string>,
      nodeArgs: readonly string[] = [],
    ): Promise<PlatformProcess> => {
      const name = roles.join(',');
      const platform = PlatformProcess.launch({
        name,
        roles,
        root: options.root,
        env: platformEnv({ ...shared, ...extra }),
        startTimeoutMs: options.startTimeoutS * 1000,
        log,
        nodeArgs,
      });
      const stopIt = cleanups.defer(`stop the ${name} process`, () => platform.stop());
      if (roles.includes('worker')) stops.unshift(stopIt);
      else stops.push(stopIt);
      await platform.serving();
      return platform;
    };
    const profiled = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    // The gateway's port is chosen here, so both processes can start at once.
    const [measured, worker] =
      mode === 'split'
        ? await bothStarted(
            start(['api', 'gateway'], {}, profiled),
            start(['worker'], {
              // A worker prints nothing when it has started but its "worker role: ... running" log line.
              LOG_LEVEL: 'info',
              PUBLIC_GATEWAY_URL: `ws://127.0.0.1:${gatewayPort}`,
            }),
          )
        : [await start(['api', 'gateway', 'worker'], {}, profiled), undefined];
    const apiUrl = measured.apiUrl as string;
    const workspaces = await createAgents(apiUrl, provisioned, engines ? { voice: FAKE_ENGINES_VOICE } : {});
    return { mode, apiUrl, measured, worker, engines, workspaces, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

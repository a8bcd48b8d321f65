/**
 * The server under test for `bench/api.ts`: the platform as `voiceagent serve` builds it, configured only from
 * the environment the parent gives it. Started with `child_process.fork`; it reports its URL and bootstrap API
 * key over the IPC channel, answers CPU samples of itself, and shuts down cleanly on `stop`, SIGTERM, SIGINT or
 * when the parent goes away (a clean exit also lets `--cpu-prof` write its profile).
 */
import { type RunningPlatform, startPlatform } from '../cli/serve.ts';
import { loadConfig } from '../core/config.ts';
import { cpuSample, sendToParent, type ToServer } from './api-protocol.ts';

const CLOSE_TIMEOUT_MS = 10_000;

let platform: RunningPlatform | undefined;
let stopping = false;

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const force = setTimeout(() => process.exit(code === 0 ? 1 : code), CLOSE_TIMEOUT_MS);
  force.unref();
  try {
    await platform?.close();
  } catch (error) {
    process.stderr.write(`api-server: close failed: ${String(error)}\n`);
    code = code === 0 ? 1 : code;
  }
  process.exit(code);
}

process.on('message', (message: ToServer) => {
  if (message.type === 'cpu') sendToParent({ type: 'cpu', id: message.id, sample: cpuSample() });
  else if (message.type === 'stop') void stop(0);
});
process.on('disconnect', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));

async function main(): Promise<void> {
  if (!process.send)
    throw new Error('bench/api-server.ts is started by bench/api.ts (it needs an IPC channel)');
  const config = loadConfig(process.env);
  if (config.host !== '127.0.0.1')
    throw new Error(`HOST must be 127.0.0.1 for the benchmark, got ${config.host}`);
  platform = await startPlatform(config);
  if (!platform.apiUrl || !platform.bootstrapped) {
    throw new Error('the platform did not start the API or did not create the first workspace');
  }
  sendToParent({
    type: 'ready',
    url: platform.apiUrl,
    apiKey: platform.bootstrapped.apiKey,
    pid: process.pid,
  });
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  sendToParent({ type: 'error', message });
  void stop(1);
});

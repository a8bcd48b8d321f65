import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, parseRoles } from '../core/config.ts';
import { ensureServerPortsFree } from '../core/listen-error.ts';
import { describeCoverage } from '../engines/stt/coverage.ts';
import { UsageError } from './usage-error.ts';

export const USAGE = `voiceagent: run and operate the voice agent platform

  voiceagent serve [--roles api,gateway,worker]
  voiceagent workspace create --name NAME [--mode sandbox|production] [--balance-inr N]
  voiceagent workspace queued-events WORKSPACE_ID on|off
  voiceagent workspace campaigns WORKSPACE_ID on|off
  voiceagent key create WORKSPACE_ID
  voiceagent key revoke KEY_OR_KEY_ID
  voiceagent wallet topup WORKSPACE_ID --inr N
  voiceagent events list --dead [--workspace WORKSPACE_ID]
  voiceagent events replay EVT_ID
  voiceagent webhook-secret rotate WORKSPACE_ID [--overlap-hours 24]
  voiceagent flow-test --flow FILE [--brief FILE] [--simulate N] [--rounds N] [--model M] [--url URL] [--key KEY]

Settings come from the environment (see README.md, "Configuration").`;

/** Runs one command line; returns the process exit code (0 ok, 1 failure, 2 usage). */
export async function main(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (!command || command === 'help' || command === '--help' || command === '-h') {
      process.stdout.write(`${USAGE}\n`);
      return command ? 0 : 2;
    }
    if (command === 'serve') return await serveCommand(rest, env);
    const config = loadConfig(env);
    // Each command's modules load when it runs: a command line answers without loading the others'.
    switch (command) {
      case 'workspace':
        return await (await import('./commands/operator.ts')).runWorkspaceCommand(config, rest);
      case 'key':
        return await (await import('./commands/operator.ts')).runKeyCommand(config, rest);
      case 'wallet':
        return await (await import('./commands/operator.ts')).runWalletCommand(config, rest);
      case 'events':
        return await (await import('./commands/events.ts')).runEventsCommand(config, rest);
      case 'webhook-secret':
        return await (await import('./commands/events.ts')).runWebhookSecretCommand(config, rest);
      case 'flow-test':
        return await (await import('./commands/flow-test.ts')).runFlowTestCommand(config, rest);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError || isParseArgsError(error)) {
      process.stderr.write(`voiceagent: ${(error as Error).message}\n\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`voiceagent: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

async function serveCommand(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const { values } = parseArgs({ args, options: { roles: { type: 'string' } }, strict: true });
  const config = loadConfig(values.roles ? { ...env, ROLES: parseRoles(values.roles).join(',') } : env);
  // Checked before the platform's modules load (engine runtimes, native addons): a second start on busy ports
  // says so within a second instead of after the engines' load time.
  await ensureServerPortsFree(config);
  const { startPlatform } = await import('./serve.ts');
  const platform = await startPlatform(config);
  if (platform.bootstrapped) {
    process.stdout.write(
      `First start: created sandbox workspace ${platform.bootstrapped.workspaceId}.\n` +
        `API key (shown once; also in ${platform.bootstrapped.file}): ${platform.bootstrapped.apiKey}\n`,
    );
  }
  if (platform.speech) process.stdout.write(`${describeCoverage(platform.speech)}\n`);
  if (platform.apiUrl) process.stdout.write(`Control API: ${platform.apiUrl}\n`);
  if (platform.gatewayUrl) process.stdout.write(`Media gateway: ${platform.gatewayUrl}\n`);
  const signals = shutdownSignals();
  await signals.first;
  await platform.shutdown({ drainMs: config.shutdownDrainMs, endNow: signals.second });
  signals.dispose();
  return 0;
}

/**
 * Signals this close after the one before count once: Ctrl-C under `npm start` reaches the server twice, from
 * the terminal and forwarded by npm.
 */
const SAME_SIGNAL_MS = 1_000;

/**
 * SIGTERM/SIGINT: the first starts the drain, the second ends the live calls at once (settled all the same), a
 * third exits without waiting.
 */
function shutdownSignals(): { first: Promise<void>; second: Promise<void>; dispose(): void } {
  let count = 0;
  let lastAt = Number.NEGATIVE_INFINITY;
  let first!: () => void;
  let second!: () => void;
  const firstSignal = new Promise<void>((resolve) => {
    first = resolve;
  });
  const secondSignal = new Promise<void>((resolve) => {
    second = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    const now = performance.now();
    if (now - lastAt < SAME_SIGNAL_MS) return;
    lastAt = now;
    count++;
    if (count === 1) first();
    else if (count === 2) {
      process.stderr.write(`voiceagent: ${signal} again: ending live calls now\n`);
      second();
    } else process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    first: firstSignal,
    second: secondSignal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

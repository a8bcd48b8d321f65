import { parseArgs } from 'node:util';
import type { Config } from '../../core/config.ts';
import { newId } from '../../core/ids.ts';
import { paiseToRupees, rupeesToPaise } from '../../core/money.ts';
import type { Store, WorkspaceMode } from '../../core/store/types.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { openConfiguredStore } from '../store.ts';
import { UsageError } from '../usage-error.ts';

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openConfiguredStore(config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function parseRupees(text: string | undefined, flag: string, options: { positive: boolean }): number {
  const value = Number(text);
  if (
    text === undefined ||
    text.trim() === '' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (options.positive && value === 0)
  ) {
    throw new UsageError(
      `${flag} must be a ${options.positive ? 'positive' : 'non-negative'} amount in rupees`,
    );
  }
  if (Math.round(value * 100) !== value * 100 && Math.abs(Math.round(value * 100) - value * 100) > 1e-6) {
    throw new UsageError(`${flag} has more than two decimals`);
  }
  if (value > 10_000_000) throw new UsageError(`${flag} is larger than ₹1,00,00,000`);
  return rupeesToPaise(value);
}

/**
 * `workspace create --name NAME [--mode sandbox|production] [--balance-inr N]`,
 * `workspace queued-events|campaigns WORKSPACE_ID on|off`
 */
export async function runWorkspaceCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const toggle = WORKSPACE_SWITCHES.find((s) => s.command === sub);
  if (toggle) return runSwitchCommand(config, toggle, rest);
  if (sub !== 'create') {
    throw new UsageError(
      `workspace: expected "create" or one of ${WORKSPACE_SWITCHES.map((s) => `"${s.command}"`).join(', ')}`,
    );
  }
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, mode: { type: 'string' }, 'balance-inr': { type: 'string' } },
    strict: true,
  });
  const name = values.name?.trim();
  if (!name) throw new UsageError('workspace create: --name is required');
  if (name.length > 200) throw new UsageError('workspace create: --name is longer than 200 characters');
  const mode = (values.mode ?? 'sandbox') as WorkspaceMode;
  if (mode !== 'sandbox' && mode !== 'production')
    throw new UsageError('--mode must be sandbox or production');
  const balancePaise =
    values['balance-inr'] === undefined
      ? 0
      : parseRupees(values['balance-inr'], '--balance-inr', { positive: false });
  print(await withStore(config, (store) => provisionWorkspace(store, { name, mode, balancePaise })));
  return 0;
}

/** A per-workspace feature the operator turns on or off. */
interface WorkspaceSwitch {
  command: string;
  field: string;
  set: (store: Store, workspaceId: string, enabled: boolean) => Promise<void>;
}

const WORKSPACE_SWITCHES: readonly WorkspaceSwitch[] = [
  // `call.queued` events are opt-in per workspace (interface "v2 call webhooks").
  {
    command: 'queued-events',
    field: 'queued_events',
    set: (store, id, on) => store.workspaces.setQueuedEvents(id, on),
  },
  // Campaigns and the do-not-call list: on by default; off, their routes answer 503 campaigns_unavailable.
  { command: 'campaigns', field: 'campaigns', set: (store, id, on) => store.workspaces.setCampaigns(id, on) },
];

async function runSwitchCommand(config: Config, toggle: WorkspaceSwitch, args: string[]): Promise<number> {
  const [workspaceId, setting, ...extra] = args;
  if (!workspaceId || (setting !== 'on' && setting !== 'off') || extra.length > 0) {
    throw new UsageError(`workspace ${toggle.command}: expected WORKSPACE_ID on|off`);
  }
  return withStore(config, async (store) => {
    if (!(await store.workspaces.get(workspaceId))) throw new Error(`no workspace ${workspaceId}`);
    await toggle.set(store, workspaceId, setting === 'on');
    print({ workspace_id: workspaceId, [toggle.field]: setting === 'on' });
    return 0;
  });
}

/** `key create WORKSPACE_ID`, `key revoke KEY_OR_KEY_ID` */
export async function runKeyCommand(config: Config, args: string[]): Promise<number> {
  const [sub, target, ...extra] = args;
  if (!target || extra.length > 0) throw new UsageError(`key ${sub ?? ''}: expected exactly one argument`);
  if (sub === 'create') {
    return withStore(config, async (store) => {
      if (!(await store.workspaces.get(target))) throw new Error(`no workspace ${target}`);
      const { key, record } = await store.apiKeys.create(target);
      print({ workspace_id: target, key_id: record.id, api_key: key });
      return 0;
    });
  }
  if (sub === 'revoke') {
    return withStore(config, async (store) => {
      if (!(await store.apiKeys.revoke(target))) throw new Error('no such key');
      print({ revoked: true });
      return 0;
    });
  }
  throw new UsageError('key: expected "create" or "revoke"');
}

/** `wallet topup WORKSPACE_ID --inr N` */
export async function runWalletCommand(config: Config, args: string[]): Promise<number> {
  const [sub, workspaceId, ...rest] = args;
  if (sub !== 'topup' || !workspaceId) throw new UsageError('wallet: expected "topup WORKSPACE_ID --inr N"');
  const { values } = parseArgs({ args: rest, options: { inr: { type: 'string' } }, strict: true });
  const amountPaise = parseRupees(values.inr, '--inr', { positive: true });
  return withStore(config, async (store) => {
    if (!(await store.workspaces.get(workspaceId))) throw new Error(`no workspace ${workspaceId}`);
    const entry = await store.wallet.credit(workspaceId, {
      amountPaise,
      reference: newId('transaction'),
      kind: 'topup',
      description: 'operator top-up',
    });
    const balance = await store.wallet.balance(workspaceId);
    print({
      workspace_id: workspaceId,
      transaction_id: entry.id,
      amount_inr: paiseToRupees(amountPaise),
      balance_inr: paiseToRupees(balance.balancePaise),
      available_inr: paiseToRupees(balance.availablePaise),
    });
    return 0;
  });
}

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config.ts';
import type { Coordinator } from '../core/coord/types.ts';
import { rupeesToPaise } from '../core/money.ts';
import type { Store } from '../core/store/types.ts';
import { type ProvisionedWorkspace, provisionWorkspace } from '../core/workspaces/provision.ts';

/**
 * On first start with an empty store: a sandbox workspace with a starting balance, its credentials written to
 * DATA_DIR/credentials.json (0600) and returned so `serve` can print the key once.
 */
export async function bootstrapFirstWorkspace(
  config: Config,
  store: Store,
  coord: Coordinator,
): Promise<{ workspace: ProvisionedWorkspace; file: string } | undefined> {
  if ((await store.workspaces.count()) > 0) return undefined;
  const lock = await coord.lock('bootstrap:first-workspace', 30_000);
  if (!lock) return undefined;
  try {
    if ((await store.workspaces.count()) > 0) return undefined;
    const workspace = await provisionWorkspace(store, {
      name: 'Default workspace',
      mode: 'sandbox',
      balancePaise: rupeesToPaise(config.bootstrapBalanceInr),
    });
    mkdirSync(config.dataDir, { recursive: true });
    const file = credentialsFile(config);
    writeFileSync(file, `${JSON.stringify(workspace, null, 2)}\n`, { mode: 0o600 });
    return { workspace, file };
  } finally {
    await lock.release();
  }
}

function credentialsFile(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'credentials.json');
}

/**
 * Keeps DATA_DIR/credentials.json true after the operator changed one of its secrets (webhook-secret rotate):
 * when the file holds that workspace's credentials, the new value replaces the old. Returns whether it did.
 */
export function updateFirstStartCredentials(
  config: Pick<Config, 'dataDir'>,
  workspaceId: string,
  changes: Partial<Pick<ProvisionedWorkspace, 'webhook_secret'>>,
): boolean {
  const file = credentialsFile(config);
  if (!existsSync(file)) return false;
  const stored = JSON.parse(readFileSync(file, 'utf8')) as ProvisionedWorkspace;
  if (stored.workspace_id !== workspaceId) return false;
  writeFileSync(file, `${JSON.stringify({ ...stored, ...changes }, null, 2)}\n`, { mode: 0o600 });
  return true;
}

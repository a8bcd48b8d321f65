import { newId } from '../ids.ts';
import type { Store, WorkspaceMode } from '../store/types.ts';

export interface ProvisionedWorkspace {
  workspace_id: string;
  mode: WorkspaceMode;
  api_key: string;
  webhook_secret: string;
  v1: { public_key: string; private_key: string; workspace: string };
}

/**
 * A new workspace with everything a customer needs to start, in one transaction: a v2 secret key, a webhook
 * signing secret, v1 credentials for the legacy API, and an optional starting balance. Secrets are returned
 * once and stored only hashed (keys) or as the signing secret itself.
 */
export async function provisionWorkspace(
  store: Store,
  input: { name: string; mode: WorkspaceMode; balancePaise: number },
): Promise<ProvisionedWorkspace> {
  return store.transaction(async (repos) => {
    const workspace = await repos.workspaces.create({ name: input.name, mode: input.mode });
    const { key } = await repos.apiKeys.create(workspace.id);
    const webhookSecret = await repos.secrets.createWebhookSecret(workspace.id);
    const v1 = await repos.secrets.createV1Credentials(workspace.id);
    if (input.balancePaise > 0) {
      await repos.wallet.credit(workspace.id, {
        amountPaise: input.balancePaise,
        reference: newId('transaction'),
        kind: 'topup',
        description: 'starting balance',
      });
    }
    return {
      workspace_id: workspace.id,
      mode: workspace.mode,
      api_key: key,
      webhook_secret: webhookSecret,
      v1: { public_key: v1.publicKey, private_key: v1.privateKey, workspace: workspace.id },
    };
  });
}

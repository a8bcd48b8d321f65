/** Test set-up shared by the call suites: a workspace with money in its wallet and one agent. For tests only. */
import { newId } from '../../ids.ts';
import type { Store } from '../../store/types.ts';

export interface FundedWorkspace {
  workspaceId: string;
  agentId: string;
}

export async function fundedWorkspace(
  store: Store,
  balancePaise: number,
  options: { queuedEvents?: boolean; agent?: Record<string, unknown> } = {},
): Promise<FundedWorkspace> {
  const { id: workspaceId } = await store.workspaces.create({ name: 'Acme', mode: 'production' });
  if (balancePaise > 0) {
    await store.wallet.credit(workspaceId, { amountPaise: balancePaise, reference: newId('transaction') });
  }
  if (options.queuedEvents) await store.workspaces.setQueuedEvents(workspaceId, true);
  const agent = await store.agents.create(
    workspaceId,
    options.agent ?? { name: 'Asha', max_duration_secs: 300 },
  );
  return { workspaceId, agentId: agent.id };
}

/** Test set-up shared by the call suites: a workspace with money in its wallet and one agent. For tests only. */
import { settingsJson } from '../../agents/stored.ts';
import { testAgent } from '../../agents/testing/agents.ts';
import type { AgentSettings } from '../../agents/types.ts';
import { newId } from '../../ids.ts';
import type { Store } from '../../store/types.ts';

export interface FundedWorkspace {
  workspaceId: string;
  agentId: string;
}

export async function fundedWorkspace(
  store: Store,
  balancePaise: number,
  options: { queuedEvents?: boolean; agent?: Partial<AgentSettings> } = {},
): Promise<FundedWorkspace> {
  const { id: workspaceId } = await store.workspaces.create({ name: 'Acme', mode: 'production' });
  if (balancePaise > 0) {
    await store.wallet.credit(workspaceId, { amountPaise: balancePaise, reference: newId('transaction') });
  }
  if (options.queuedEvents) await store.workspaces.setQueuedEvents(workspaceId, true);
  const agent = await store.agents.create(
    workspaceId,
    settingsJson(testAgent({ max_duration_secs: 300, ...options.agent })),
  );
  return { workspaceId, agentId: agent.id };
}

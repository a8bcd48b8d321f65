import { request } from 'undici';
import { openConfiguredStore } from '../../cli/store.ts';
import { loadConfig } from '../../core/config.ts';
import { rupeesToPaise } from '../../core/money.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';

/** A sandbox workspace of the benchmark, with the one agent its calls use. */
export interface BenchWorkspace {
  workspaceId: string;
  apiKey: string;
  agentId: string;
}

/**
 * What every call is placed with: a short first message, so the callee's turn comes soon, and the 120 s
 * ceiling, so a call that goes wrong still ends inside the benchmark's deadline.
 */
export const AGENT_BODY = {
  name: 'Benchmark caller',
  system_prompt: 'You are Asha from Acme, calling {{name}} about their order. Keep replies short.',
  first_message: 'Hello {{name}}, this is Asha.',
  max_duration_secs: 120,
} as const;

/**
 * Per workspace: enough for its queue to fill (500 calls held at 120 s of t3, ₹6 each), so admission never
 * answers 402 insufficient_balance.
 */
export const WORKSPACE_BALANCE_INR = 10_000;

/**
 * Creates `count` sandbox workspaces in the store the platform will open (same DATA_DIR, or the same
 * DATABASE_URL and schema), before the platform starts: the API has no route for it, and the CLI would cost a
 * process start per workspace.
 */
export async function provisionWorkspaces(
  storeEnv: Record<string, string>,
  count: number,
): Promise<Array<{ workspaceId: string; apiKey: string }>> {
  const store = await openConfiguredStore(loadConfig(storeEnv));
  try {
    const created: Array<{ workspaceId: string; apiKey: string }> = [];
    for (let i = 0; i < count; i++) {
      const workspace = await provisionWorkspace(store, {
        name: `Benchmark ${i + 1}`,
        mode: 'sandbox',
        balancePaise: rupeesToPaise(WORKSPACE_BALANCE_INR),
      });
      created.push({ workspaceId: workspace.workspace_id, apiKey: workspace.api_key });
    }
    return created;
  } finally {
    await store.close();
  }
}

/** One agent per workspace, created over the API as a customer would; `settings` add to `AGENT_BODY`. */
export async function createAgents(
  apiUrl: string,
  workspaces: ReadonlyArray<{ workspaceId: string; apiKey: string }>,
  settings: Record<string, unknown> = {},
): Promise<BenchWorkspace[]> {
  return Promise.all(
    workspaces.map(async (workspace) => {
      const response = await request(`${apiUrl}/v2/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${workspace.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...AGENT_BODY, ...settings }),
      });
      const text = await response.body.text();
      if (response.statusCode !== 201) {
        throw new Error(`creating an agent answered ${response.statusCode}: ${text.slice(0, 300)}`);
      }
      const id = (JSON.parse(text) as { id?: unknown }).id;
      if (typeof id !== 'string') throw new Error(`creating an agent returned no id: ${text.slice(0, 300)}`);
      return { ...workspace, agentId: id };
    }),
  );
}

/** The `POST /v2/calls` body for a workspace's agent: a sandbox number whose callee converses. */
export function callBody(agentId: string): string {
  return JSON.stringify({ agent_id: agentId, to: '+919876543219', variables: { name: 'Ravi' } });
}

import { z } from 'zod';
import { toolSchema } from '../agents/stored.ts';
import type { ToolDefinition } from '../agents/types.ts';
import { ApiError, invalid } from '../errors.ts';
import type { Repositories, Store } from '../store/types.ts';
import type { V1IntegrationRecord } from '../store/v1-types.ts';
import { type ToolRules, validateTools } from '../tools/definition.ts';

/** Integrations one workspace may hold, and what the list returns. */
export const INTEGRATIONS_LIMIT = 100;

export const integrationBody = z
  .object({
    integration_id: z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1-100 letters, digits, _ . : or -'),
    name: z.string().max(200).optional(),
    /** v2 tool definitions, exactly as an agent's `tools` takes them; checked the same way. */
    tools: z.array(z.unknown()).min(1).max(32),
  })
  .strict();
export type IntegrationBody = z.output<typeof integrationBody>;

export interface Integration {
  integration_id: string;
  name: string;
  tools: ToolDefinition[];
  createdAt: number;
  updatedAt: number;
}

const storedIntegrationSchema = z.object({ name: z.string(), tools: z.array(toolSchema) });

/** The one decoder of a stored integration. */
function integrationOf(record: V1IntegrationRecord): Integration {
  const doc = storedIntegrationSchema.parse(record.document);
  return {
    integration_id: record.integrationId,
    name: doc.name,
    tools: doc.tools,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The tools as v2 checks them, or a 400 whose message lists every problem with its path. */
export function checkedTools(tools: unknown, rules: ToolRules, base: string): ToolDefinition[] {
  const checked = validateTools(tools, rules, base);
  if (checked.ok) return checked.tools;
  throw new ApiError('invalid_request', checked.details.map((d) => `${d.path}: ${d.message}`).join('; '));
}

/**
 * v1 tool integrations: named groups of v2 tool definitions (`on_call`, `pre_call` or `post_call`) that an
 * assistant takes by `agent.tools: [{integration_id, tools: [names]}]`; the named definitions become the
 * agent's tools when the assistant is saved.
 */
export class V1Integrations {
  constructor(
    private readonly store: Store,
    private readonly toolRules: (workspaceId: string) => Promise<ToolRules>,
  ) {}

  async put(workspaceId: string, body: IntegrationBody): Promise<Integration> {
    const tools = checkedTools(body.tools, await this.toolRules(workspaceId), 'tools');
    return this.store.transaction(async (repos) => {
      const exists = await repos.v1.integration(workspaceId, body.integration_id);
      if (
        !exists &&
        (await repos.v1.integrations(workspaceId, INTEGRATIONS_LIMIT)).length >= INTEGRATIONS_LIMIT
      ) {
        throw invalid(
          'integration_id',
          `the workspace has ${INTEGRATIONS_LIMIT} integrations, the most it may`,
        );
      }
      const record = await repos.v1.putIntegration(workspaceId, body.integration_id, {
        name: body.name ?? body.integration_id,
        tools,
      });
      return integrationOf(record);
    });
  }

  async list(workspaceId: string): Promise<Integration[]> {
    return (await this.store.v1.integrations(workspaceId, INTEGRATIONS_LIMIT)).map(integrationOf);
  }

  /** The definitions an assistant's `agent.tools` names; an unknown integration or tool is a 400. */
  async resolve(
    repos: Repositories,
    workspaceId: string,
    refs: ReadonlyArray<{ integration_id: string; tools: readonly string[] }>,
  ): Promise<ToolDefinition[]> {
    const out: ToolDefinition[] = [];
    for (const [i, ref] of refs.entries()) {
      const record = await repos.v1.integration(workspaceId, ref.integration_id);
      if (!record) {
        throw invalid(
          `agent.tools[${i}].integration_id`,
          `no integration "${ref.integration_id}"; create it with POST /v1/admin/tools/create`,
        );
      }
      const integration = integrationOf(record);
      for (const [j, name] of ref.tools.entries()) {
        const tool = integration.tools.find((t) => t.name === name);
        if (!tool)
          throw invalid(
            `agent.tools[${i}].tools[${j}]`,
            `integration "${ref.integration_id}" has no tool "${name}"`,
          );
        out.push(tool);
      }
    }
    return out;
  }
}

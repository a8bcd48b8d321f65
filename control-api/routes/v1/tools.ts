import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toolSchema } from '../../../core/agents/stored.ts';
import { isoTime } from '../../../core/clock.ts';
import { type Integration, integrationBody, type V1Integrations } from '../../../core/v1/integrations.ts';
import { type V1Registry, v1Route } from './http.ts';

const tag = 'Tools';
const integrationData = z.object({
  integration_id: z.string(),
  name: z.string(),
  tools: z.array(toolSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

function present(integration: Integration) {
  return {
    integration_id: integration.integration_id,
    name: integration.name,
    tools: integration.tools,
    createdAt: isoTime(integration.createdAt),
    updatedAt: isoTime(integration.updatedAt),
  };
}

/**
 * `/v1/admin/tools/*`: the workspace's tool integrations. An assistant's `agent.tools: [{integration_id,
 * tools}]` takes the named tools of an integration as its v2 agent's tools (README "Tools").
 */
export function registerToolRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  integrations: V1Integrations,
): void {
  v1Route(app, registry, {
    method: 'GET',
    url: '/v1/admin/tools/list',
    operationId: 'v1ListToolIntegrations',
    summary: "The workspace's tool integrations (at most 100)",
    tag,
    data: z.array(integrationData),
    handler: async ({ auth }) => ({
      message: 'tool integrations fetched',
      data: (await integrations.list(auth.workspaceId)).map(present),
    }),
  });
  v1Route(app, registry, {
    method: 'POST',
    url: '/v1/admin/tools/create',
    operationId: 'v1CreateToolIntegration',
    summary:
      "Create (or replace) an integration: `{integration_id, name?, tools}` where `tools` are v2 tool definitions, checked as an agent's are. Assistants saved later take its tools; saved assistants keep theirs until their next update",
    tag,
    body: integrationBody,
    data: integrationData,
    status: 201,
    handler: async ({ auth, body }) => ({
      status: 201,
      message: 'tool integration saved',
      data: present(await integrations.put(auth.workspaceId, body)),
    }),
  });
}

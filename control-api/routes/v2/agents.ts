import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AgentService } from '../../../core/agents/service.ts';
import { flowSchema } from '../../../core/agents/stored.ts';
import type { AgentInput, AgentPatch } from '../../../core/agents/types.ts';
import { ApiError } from '../../../core/errors.ts';
import { listBody, listEnvelope, listQuery, resolveCursor } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { agentBody } from '../../presenters.ts';
import { agentSchema, createAgentBody, saveFlowBody, updateAgentBody } from '../../schemas/agent.ts';
import { idParams } from '../../schemas/common.ts';

const tag = 'Agents';
const params = idParams('agent');

function createAgentRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/agents',
    operationId: 'createAgent',
    summary: 'Create an agent (revision 1)',
    tag,
    body: createAgentBody,
    responses: { 201: { description: 'The new agent', schema: agentSchema } },
    errors: ['invalid_request', 'invalid_flow', 'invalid_tools', 'not_found'],
    handler: async ({ auth, body, reply }) => {
      reply.code(201);
      return agentBody(await agents.create(auth.workspaceId, body as AgentInput));
    },
  });
}

function listAgentsRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents',
    operationId: 'listAgents',
    summary: 'List agents, newest first (cursor-paginated)',
    tag,
    query: listQuery('agent'),
    responses: { 200: { description: 'A page of agents', schema: listEnvelope(agentSchema) } },
    errors: ['invalid_request'],
    handler: async ({ auth, query }) => {
      const after = resolveCursor(query, 'agent');
      const page = await agents.list(auth.workspaceId, { limit: query.limit, after });
      return listBody(page.items.map(agentBody), page.hasMore, (a) => a.id);
    },
  });
}

function getAgentRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents/:id',
    operationId: 'getAgent',
    summary: 'Read an agent at its current revision',
    tag,
    params,
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    errors: ['not_found'],
    handler: async ({ auth, params: p }) => agentBody(await agents.get(auth.workspaceId, p.id)),
  });
}

function updateAgentRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'PATCH',
    url: '/agents/:id',
    operationId: 'updateAgent',
    summary:
      'Change some settings (a new revision); objects merge one level deep, null clears flow, calls_from and webhook_url',
    tag,
    params,
    body: updateAgentBody,
    responses: { 200: { description: 'The agent at its new revision', schema: agentSchema } },
    errors: ['invalid_request', 'invalid_flow', 'invalid_tools', 'not_found', 'conflict'],
    handler: async ({ auth, params: p, body }) => {
      const { if_revision, ...patch } = body;
      return agentBody(await agents.update(auth.workspaceId, p.id, patch as AgentPatch, if_revision));
    },
  });
}

function deleteAgentRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'DELETE',
    url: '/agents/:id',
    operationId: 'deleteAgent',
    summary: 'Delete an agent (soft delete; it then answers 404)',
    tag,
    params,
    responses: {
      200: {
        description: 'Deleted',
        schema: z.object({ id: z.string(), object: z.literal('agent'), deleted: z.literal(true) }),
      },
    },
    errors: ['not_found'],
    handler: async ({ auth, params: p }) => {
      await agents.remove(auth.workspaceId, p.id);
      return { id: p.id, object: 'agent' as const, deleted: true as const };
    },
  });
}

function getAgentFlowRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents/:id/flow',
    operationId: 'getAgentFlow',
    summary: "Read the agent's flow graph (404 when the agent is single-prompt)",
    tag,
    params,
    responses: {
      200: {
        description: 'The graph with defaults filled in, and the agent revision it belongs to',
        schema: flowSchema.extend({ revision: z.number().int() }),
      },
    },
    errors: ['not_found'],
    handler: async ({ auth, params: p }) => {
      const agent = await agents.get(auth.workspaceId, p.id);
      if (!agent.settings.flow) {
        throw new ApiError('not_found', `agent ${p.id} has no flow; it is a single-prompt agent`);
      }
      return { ...agent.settings.flow, revision: agent.revision };
    },
  });
}

function saveAgentFlowRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'PUT',
    url: '/agents/:id/flow',
    operationId: 'saveAgentFlow',
    summary:
      'Replace the flow graph (a new revision); makes a single-prompt agent node-based. 200 with the agent',
    tag,
    params,
    query: z.object({ if_revision: z.coerce.number().int().min(1).optional() }).strict(),
    body: saveFlowBody,
    responses: { 200: { description: 'The agent with its new flow and revision', schema: agentSchema } },
    errors: ['invalid_request', 'invalid_flow', 'not_found', 'conflict'],
    handler: async ({ auth, params: p, query, body }) => {
      const { if_revision, ...flow } = body;
      const expected = if_revision ?? query.if_revision;
      return agentBody(await agents.saveFlow(auth.workspaceId, p.id, flow, expected));
    },
  });
}

export function registerAgentRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  agents: AgentService,
): void {
  registerRoutes(app, registry, [
    createAgentRoute(agents),
    listAgentsRoute(agents),
    getAgentRoute(agents),
    updateAgentRoute(agents),
    deleteAgentRoute(agents),
    getAgentFlowRoute(agents),
    saveAgentFlowRoute(agents),
  ]);
}

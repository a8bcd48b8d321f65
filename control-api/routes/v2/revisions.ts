import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AgentService } from '../../../core/agents/service.ts';
import { ApiError } from '../../../core/errors.ts';
import { listEnvelope, pageCursor, pageLimit } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { agentBody, agentRevisionBody } from '../../presenters.ts';
import { agentRevisionSchema, agentSchema, revisionActionBody } from '../../schemas/agent.ts';
import { idParams } from '../../schemas/common.ts';

const revisionParams = z.object({
  id: z.string().min(1).max(64),
  revision: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
});

const tag = 'Agent revisions';

function listAgentRevisionsRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents/:id/revisions',
    operationId: 'listAgentRevisions',
    summary: 'List revisions, newest first; `starting_after` is a revision number',
    tag,
    params: idParams('agent'),
    query: z
      .object({
        limit: pageLimit,
        starting_after: z.coerce
          .number()
          .int()
          .min(1)
          .max(Number.MAX_SAFE_INTEGER)
          .describe('The revision number to continue after (older revisions follow)')
          .optional(),
        cursor: pageCursor.regex(/^\d{1,15}$/, 'must be a next_cursor of this list').optional(),
      })
      .strict(),
    responses: { 200: { description: 'A page of revisions', schema: listEnvelope(agentRevisionSchema) } },
    errors: ['invalid_request', 'not_found'],
    handler: async ({ auth, params, query }) => {
      if (query.starting_after !== undefined && query.cursor !== undefined) {
        throw new ApiError('invalid_request', 'cursor: send either cursor or starting_after, not both');
      }
      const before = query.starting_after ?? (query.cursor ? Number(query.cursor) : undefined);
      const page = await agents.revisions(auth.workspaceId, params.id, {
        limit: query.limit,
        before,
      });
      const data = page.items.map(agentRevisionBody);
      const last = data[data.length - 1];
      return {
        object: 'list' as const,
        data,
        has_more: page.hasMore,
        next_cursor: page.hasMore && last ? String(last.revision) : null,
      };
    },
  });
}

function getAgentRevisionRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents/:id/revisions/:revision',
    operationId: 'getAgentRevision',
    summary: 'Read one revision of an agent',
    tag,
    params: revisionParams,
    responses: { 200: { description: 'The revision', schema: agentRevisionSchema } },
    errors: ['invalid_request', 'not_found'],
    handler: async ({ auth, params }) =>
      agentRevisionBody(await agents.revision(auth.workspaceId, params.id, params.revision)),
  });
}

function rollbackAgentRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/agents/:id/revisions/:revision/rollback',
    operationId: 'rollbackAgent',
    summary: 'Roll back: a new revision whose settings are those of the given revision',
    tag,
    params: revisionParams,
    body: revisionActionBody,
    bodyOptional: true,
    responses: { 200: { description: 'The agent at its new revision', schema: agentSchema } },
    errors: ['invalid_request', 'not_found', 'conflict'],
    handler: async ({ auth, params, body }) =>
      agentBody(await agents.rollback(auth.workspaceId, params.id, params.revision, body?.if_revision)),
  });
}

function publishAgentRoute(agents: AgentService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/agents/:id/publish',
    operationId: 'publishAgent',
    summary: 'Publish a draft agent (a new revision with draft false); 409 when it is not a draft',
    tag,
    params: idParams('agent'),
    body: revisionActionBody,
    bodyOptional: true,
    responses: { 200: { description: 'The published agent', schema: agentSchema } },
    errors: ['invalid_request', 'not_found', 'conflict'],
    handler: async ({ auth, params, body }) =>
      agentBody(await agents.publish(auth.workspaceId, params.id, body?.if_revision)),
  });
}

/**
 * Agent revisions: every save is a revision; list them, read one, roll back to one (a new revision with the old
 * settings), publish a draft. Rollback and publish take an optional `if_revision` like every save.
 */
export function registerAgentRevisionRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  agents: AgentService,
): void {
  registerRoutes(app, registry, [
    listAgentRevisionsRoute(agents),
    getAgentRevisionRoute(agents),
    rollbackAgentRoute(agents),
    publishAgentRoute(agents),
  ]);
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { PoolService } from '../../../core/telephony/pools.ts';
import { listBody, listEnvelope, listQuery, resolveCursor } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { idParams } from '../../schemas/common.ts';
import { createPoolBody, phonePoolBody, phonePoolSchema, updatePoolBody } from '../../schemas/telephony.ts';

const tag = 'Phone pools';
const params = idParams('pool');

export function registerPhonePoolRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  pools: PoolService,
): void {
  registerRoutes(app, registry, [
    createPoolRoute(pools),
    listPoolsRoute(pools),
    getPoolRoute(pools),
    updatePoolRoute(pools),
    deletePoolRoute(pools),
  ]);
}

function createPoolRoute(pools: PoolService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/phone-pools',
    operationId: 'createPhonePool',
    summary: "Group the workspace's numbers so calls ring from the one with room (pools are free)",
    tag,
    body: createPoolBody,
    responses: { 201: { description: 'The pool', schema: phonePoolSchema } },
    errors: ['invalid_request', 'not_found', 'conflict', 'telephony_unavailable'],
    handler: async ({ auth, body, reply }) => {
      reply.code(201);
      return phonePoolBody(
        await pools.create(auth.workspaceId, {
          name: body.name,
          purpose: body.purpose,
          maxPerHour: body.max_per_hour,
          defaultForCampaigns: body.default_for_campaigns,
          numberIds: body.number_ids,
        }),
      );
    },
  });
}

function listPoolsRoute(pools: PoolService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/phone-pools',
    operationId: 'listPhonePools',
    summary: 'List pools, newest first (cursor-paginated)',
    tag,
    query: listQuery('pool'),
    responses: { 200: { description: 'A page of pools', schema: listEnvelope(phonePoolSchema) } },
    errors: ['invalid_request', 'telephony_unavailable'],
    handler: async ({ auth, query }) => {
      const after = resolveCursor(query, 'pool');
      const page = await pools.list(auth.workspaceId, { limit: query.limit, ...(after ? { after } : {}) });
      return listBody(page.items.map(phonePoolBody), page.hasMore, (p) => p.id);
    },
  });
}

function getPoolRoute(pools: PoolService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/phone-pools/:id',
    operationId: 'getPhonePool',
    summary: 'Read a pool',
    tag,
    params,
    responses: { 200: { description: 'The pool', schema: phonePoolSchema } },
    errors: ['not_found', 'telephony_unavailable'],
    handler: async ({ auth, params: p }) => phonePoolBody(await pools.get(auth.workspaceId, p.id)),
  });
}

function updatePoolRoute(pools: PoolService): RouteDefinition {
  return route({
    method: 'PATCH',
    url: '/phone-pools/:id',
    operationId: 'updatePhonePool',
    summary: 'Change the name, purpose, pace, numbers (the whole list) or campaigns default',
    tag,
    params,
    body: updatePoolBody,
    responses: { 200: { description: 'The pool', schema: phonePoolSchema } },
    errors: ['invalid_request', 'not_found', 'conflict', 'telephony_unavailable'],
    handler: async ({ auth, params: p, body }) =>
      phonePoolBody(
        await pools.update(auth.workspaceId, p.id, {
          name: body.name,
          purpose: body.purpose,
          maxPerHour: body.max_per_hour,
          defaultForCampaigns: body.default_for_campaigns,
          numberIds: body.number_ids,
        }),
      ),
  });
}

function deletePoolRoute(pools: PoolService): RouteDefinition {
  return route({
    method: 'DELETE',
    url: '/phone-pools/:id',
    operationId: 'deletePhonePool',
    summary:
      'Delete a pool; its numbers stay and keep answering. 409 pool_in_use (naming them) while agents call from it',
    tag,
    params,
    responses: {
      200: {
        description: 'Deleted',
        schema: z.object({ id: z.string(), object: z.literal('phone_pool'), deleted: z.literal(true) }),
      },
    },
    errors: ['not_found', 'pool_in_use', 'telephony_unavailable'],
    handler: async ({ auth, params: p }) => {
      await pools.remove(auth.workspaceId, p.id);
      return { id: p.id, object: 'phone_pool' as const, deleted: true as const };
    },
  });
}

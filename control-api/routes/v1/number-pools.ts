import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isoTime } from '../../../core/clock.ts';
import { SecretCipher } from '../../../core/secrets/cipher.ts';
import {
  POOL_LIMITS,
  type PoolService,
  PoolService as Pools,
  type PoolView,
} from '../../../core/telephony/pools.ts';
import { TelephonyProviders } from '../../../core/telephony/providers.ts';
import { SandboxTelephony } from '../../../core/telephony/sandbox.ts';
import { TwilioAccounts } from '../../../core/telephony/twilio-account.ts';
import type { ApiDeps } from '../../app.ts';
import { idOf } from '../../schemas/common.ts';
import { type V1Registry, v1Route } from './http.ts';

const tag = 'Number pools';
const purpose = z.enum(['outreach', 'reminders', 'support', 'other']);
const name = z.string().trim().min(1).max(100);
const maxPerHour = z.number().int().min(POOL_LIMITS.maxPerHour.min).max(POOL_LIMITS.maxPerHour.max);
const numbers = z.array(idOf('phoneNumber')).max(POOL_LIMITS.numbers);
const idParams = z.object({ id: z.string().min(1).max(64) }).strict();
const poolData = z.object({
  _id: z.string(),
  name: z.string(),
  purpose,
  maxPerHour: z.number().int(),
  defaultForCampaigns: z.boolean(),
  numbers: z.array(z.string()),
  createdAt: z.string(),
});

/** A v2 phone pool in v1's shape. */
function poolOf(view: PoolView) {
  return {
    _id: view.record.id,
    name: view.record.name,
    purpose: view.record.purpose,
    maxPerHour: view.maxPerHour,
    defaultForCampaigns: view.record.defaultForCampaigns,
    numbers: view.numberIds,
    createdAt: isoTime(view.record.createdAt),
  };
}

/** The workspace's phone pools (v2's `/v2/phone-pools`) on the sandbox provider, as the pool service runs them. */
export function numberPools(deps: Pick<ApiDeps, 'store' | 'config' | 'secretKey'>): PoolService {
  return new Pools(
    deps.store,
    new TelephonyProviders(deps.store, {
      sandbox: new SandboxTelephony(),
      twilio: {
        accounts: new TwilioAccounts(deps.config.twilioApiBase, new SecretCipher(deps.secretKey)),
        statusCallbackOf: (voiceUrl) => `${voiceUrl}/status`,
      },
    }),
  );
}

/**
 * `/v1/admin/number-pool/*`: v1's number pools are the workspace's v2 phone pools (one set, seen from both):
 * list, get, create, update, delete. `numbers` are phone number ids (`pn_...`); `purpose` sets the starting pace.
 */
export function registerNumberPoolRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  pools: PoolService,
): void {
  v1Route(app, registry, {
    method: 'GET',
    url: '/v1/admin/number-pool/list',
    operationId: 'v1ListNumberPools',
    summary: "The workspace's number pools, newest first (at most 100)",
    tag,
    data: z.array(poolData),
    handler: async ({ auth }) => ({
      message: 'number pools fetched',
      data: (await pools.list(auth.workspaceId, { limit: 100 })).items.map(poolOf),
    }),
  });
  v1Route(app, registry, {
    method: 'GET',
    url: '/v1/admin/number-pool/get/:id',
    operationId: 'v1GetNumberPool',
    summary: 'One number pool',
    tag,
    params: idParams,
    data: poolData,
    handler: async ({ auth, params }) => ({
      message: 'number pool fetched',
      data: poolOf(await pools.get(auth.workspaceId, params.id)),
    }),
  });
  registerPoolWrites(app, registry, pools);
}

/** create, update and delete. */
function registerPoolWrites(app: FastifyInstance, registry: V1Registry, pools: PoolService): void {
  v1Route(app, registry, {
    method: 'POST',
    url: '/v1/admin/number-pool/create',
    operationId: 'v1CreateNumberPool',
    summary: 'Group numbers so calls ring from the one with room (purpose `other` unless given)',
    tag,
    body: z
      .object({
        name,
        purpose: purpose.optional(),
        maxPerHour: maxPerHour.optional(),
        numbers: numbers.optional(),
      })
      .strict(),
    data: poolData,
    status: 201,
    handler: async ({ auth, body }) => ({
      status: 201,
      message: 'number pool created',
      data: poolOf(
        await pools.create(auth.workspaceId, {
          name: body.name,
          purpose: body.purpose ?? 'other',
          maxPerHour: body.maxPerHour,
          numberIds: body.numbers ?? [],
        }),
      ),
    }),
  });
  v1Route(app, registry, {
    method: 'PUT',
    url: '/v1/admin/number-pool/update/:id',
    operationId: 'v1UpdateNumberPool',
    summary:
      'Change a pool: the fields sent (`numbers` replaces the list; `maxPerHour: null` is the starting pace again)',
    tag,
    params: idParams,
    body: z
      .object({
        name: name.optional(),
        purpose: purpose.optional(),
        maxPerHour: maxPerHour.nullable().optional(),
        numbers: numbers.optional(),
      })
      .strict(),
    data: poolData,
    handler: async ({ auth, params, body }) => ({
      message: 'number pool updated',
      data: poolOf(
        await pools.update(auth.workspaceId, params.id, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.purpose !== undefined ? { purpose: body.purpose } : {}),
          ...(body.maxPerHour !== undefined ? { maxPerHour: body.maxPerHour } : {}),
          ...(body.numbers !== undefined ? { numberIds: body.numbers } : {}),
        }),
      ),
    }),
  });
  v1Route(app, registry, {
    method: 'DELETE',
    url: '/v1/admin/number-pool/delete/:id',
    operationId: 'v1DeleteNumberPool',
    summary: 'Delete a pool no assistant or campaign still calls from (else 400)',
    tag,
    params: idParams,
    data: z.object({ _id: z.string() }),
    handler: async ({ auth, params }) => {
      await pools.remove(auth.workspaceId, params.id);
      return { message: 'number pool deleted', data: { _id: params.id } };
    },
  });
}

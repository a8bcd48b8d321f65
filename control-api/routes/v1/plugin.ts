import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../core/errors.ts';
import { SecretCipher } from '../../../core/secrets/cipher.ts';
import { SecretService } from '../../../core/secrets/service.ts';
import { type AssistantVoices, V1Assistants } from '../../../core/v1/assistants.ts';
import { V1Calls } from '../../../core/v1/calls.ts';
import { V1Documents } from '../../../core/v1/documents.ts';
import { V1Integrations } from '../../../core/v1/integrations.ts';
import { V1Keys } from '../../../core/v1/keys.ts';
import { V1CallEvents } from '../../../core/v1/webhooks.ts';
import type { VoiceCatalogue } from '../../../engines/tts/catalogue.ts';
import type { ApiDeps } from '../../app.ts';
import { registerAssistantRoutes } from './assistants.ts';
import { registerV1CallRoutes } from './calls.ts';
import {
  ProductOfRequest,
  registerV1Auth,
  registerV1RateLimit,
  sendV1Error,
  setV1ErrorHandler,
  V1Registry,
  v1Route,
} from './http.ts';
import { registerKnowledgeBaseRoutes } from './knowledge-base.ts';
import { numberPools, registerNumberPoolRoutes } from './number-pools.ts';
import { buildV1OpenApi } from './openapi.ts';
import { registerArchiveRoutes, registerOnboardingRoutes, registerVoiceGalleryRoutes } from './other.ts';
import { registerToolRoutes } from './tools.ts';

/** Voices as assistants need them: the catalogue, and a voice of a language and gender. */
function assistantVoices(catalogue: VoiceCatalogue): AssistantVoices {
  return {
    get: (id) => catalogue.get(id),
    defaultFor: (language) => catalogue.defaultFor(language),
    pick: (language, gender) =>
      (
        catalogue.voices.find((v) => v.languages.includes(language) && v.gender === gender) ??
        catalogue.defaultFor(language)
      )?.id,
  };
}

/**
 * The legacy v1 product as one encapsulated plugin, a sibling of v2's: served only to requests on the v1 host
 * (`V1_HOST`) or port (`V1_PORT`), with its own key headers, `{status_code, message, data}` bodies, `{code,
 * message}` errors, per-key rate limit and OpenAPI document. A v1 request for any other route gets v1's 404;
 * v2 never sees v1's shapes and v1 never sees v2's. Returns what tells v1 requests apart (the v1 port marks its
 * requests with it).
 */
export function registerV1(
  app: FastifyInstance,
  deps: ApiDeps,
  product = new ProductOfRequest(deps.config.v1Host),
): ProductOfRequest {
  app.addConstraintStrategy(product.strategy());
  app.addHook('onRequest', async (request, reply) => {
    if (!product.isV1(request.raw) || request.routeOptions.config?.v1) return;
    return sendV1Error(
      reply,
      new ApiError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`),
    );
  });
  app.register(async (v1) => {
    setV1ErrorHandler(v1, deps.config.bodyLimitBytes);
    registerV1Auth(v1, deps.store, new V1Keys(deps.store, new SecretCipher(deps.secretKey)));
    registerV1RateLimit(v1, deps.coord, {
      ratePerSec: deps.config.apiRatePerSec,
      burst: deps.config.apiRateBurst,
    });
    const registry = new V1Registry();
    const secrets = new SecretService(deps.store, new SecretCipher(deps.secretKey));
    const toolRules = async (workspaceId: string) => ({
      secrets: await secrets.names(workspaceId),
      allowPrivate: deps.config.allowPrivateWebhooks,
    });
    const integrations = new V1Integrations(deps.store, toolRules);
    const assistants = new V1Assistants(
      deps.store,
      assistantVoices(deps.voices),
      integrations,
      toolRules,
      deps.clock,
    );
    registerToolRoutes(v1, registry, integrations);
    registerAssistantRoutes(v1, registry, assistants);
    registerV1CallRoutes(v1, registry, {
      calls: new V1Calls(deps.store, new V1CallEvents(), deps.lifecycle, deps.clock),
      coord: deps.coord,
      streamTokens: deps.streamTokens,
      gatewayUrl: deps.gatewayUrl,
      allowPrivateWebhooks: deps.config.allowPrivateWebhooks,
      webCallJoinMs: deps.config.webCallJoinMs,
      ...(deps.clock ? { clock: deps.clock } : {}),
    });
    registerVoiceGalleryRoutes(v1, registry, deps.voices);
    registerArchiveRoutes(v1, registry, assistants, deps.clock);
    registerOnboardingRoutes(v1, registry, deps.store);
    registerNumberPoolRoutes(v1, registry, numberPools(deps));
    const documents = new V1Documents(deps.store, deps.config.allowPrivateWebhooks);
    v1.addHook('onClose', () => documents.close());
    registerKnowledgeBaseRoutes(v1, registry, documents);
    let document: Record<string, unknown> | undefined;
    v1Route(v1, registry, {
      method: 'GET',
      url: '/v1/openapi.json',
      operationId: 'v1OpenApi',
      summary: 'This document',
      tag: 'Reference',
      auth: false,
      handler: async ({ reply }) => {
        document ??= buildV1OpenApi(registry);
        return reply.type('application/json; charset=utf-8').send(document) as never;
      },
    });
  });
  return product;
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type Clock, isoTime, systemClock } from '../../../core/clock.ts';
import type { Store } from '../../../core/store/types.ts';
import type { V1Assistants } from '../../../core/v1/assistants.ts';
import { onboardWorkspace } from '../../../core/v1/onboarding.ts';
import type { VoiceCatalogue } from '../../../engines/tts/catalogue.ts';
import { type V1Registry, v1Route } from './http.ts';

/** `GET /v1/admin/voice-gallery/list`: the v2 voice catalogue in v1's shape. */
export function registerVoiceGalleryRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  voices: VoiceCatalogue,
): void {
  v1Route(app, registry, {
    method: 'GET',
    url: '/v1/admin/voice-gallery/list',
    operationId: 'v1VoiceGallery',
    summary: 'Every voice an assistant can speak with (`agent.identity.voice` takes its `voiceId`)',
    tag: 'Voice gallery',
    data: z.array(
      z.object({
        voiceId: z.string(),
        name: z.string(),
        gender: z.string(),
        language: z.string(),
        languages: z.array(z.string()),
        provider: z.string(),
      }),
    ),
    handler: async () => ({
      message: 'voices fetched',
      data: voices.voices.map((v) => ({
        voiceId: v.id,
        name: v.name,
        gender: v.gender,
        language: v.language,
        languages: v.languages,
        provider: v.engine,
      })),
    }),
  });
}

/**
 * Organization archiving: `POST /v1/admin/organization/archive` archives every assistant of the workspace
 * (`archivedAt` set; their calls are refused), `.../unarchive` restores them.
 */
export function registerArchiveRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  assistants: V1Assistants,
  clock: Clock = systemClock,
): void {
  for (const [action, archived] of [
    ['archive', true],
    ['unarchive', false],
  ] as const) {
    v1Route(app, registry, {
      method: 'POST',
      url: `/v1/admin/organization/${action}`,
      operationId: `v1Organization${archived ? 'Archive' : 'Unarchive'}`,
      summary: archived
        ? "Archive the organization's workspace: every assistant gets `archivedAt`, and calls with them are refused"
        : 'Restore the archived assistants of the workspace',
      tag: 'Organization',
      data: z.object({ assistants: z.number().int() }),
      handler: async ({ auth }) => {
        const at = archived ? isoTime(clock.now()) : null;
        const all = await assistants.list(auth.workspaceId);
        let changed = 0;
        for (const assistant of all) {
          if ((assistant.archivedAt !== null) === archived) continue;
          await assistants.setArchived(auth.workspaceId, assistant._id, at);
          changed += 1;
        }
        return {
          message: archived ? 'organization archived' : 'organization restored',
          data: { assistants: changed },
        };
      },
    });
  }
}

/** `POST /v2/workspace/onboard/custom`: a new sandbox workspace and its keys, addressable by the organization. */
export function registerOnboardingRoutes(app: FastifyInstance, registry: V1Registry, store: Store): void {
  v1Route(app, registry, {
    method: 'POST',
    url: '/v2/workspace/onboard/custom',
    operationId: 'v1OnboardWorkspace',
    summary:
      'Create a sandbox workspace (empty wallet) with its own keys, shown once; the calling organization may then address it with the `workspace` header. At most 50 per organization',
    tag: 'Onboarding',
    body: z.object({ name: z.string().min(1).max(200) }).strict(),
    status: 201,
    data: z.object({
      workspace: z.object({ id: z.string(), name: z.string(), mode: z.string() }),
      apiKey: z.string(),
      webhookSecret: z.string(),
      publicKey: z.string(),
      privateKey: z.string(),
    }),
    handler: async ({ auth, body }) => {
      const made = await onboardWorkspace(store, { publicKey: auth.publicKey }, body);
      return {
        status: 201,
        message: 'workspace onboarded',
        data: {
          workspace: { id: made.workspace_id, name: body.name, mode: made.mode },
          apiKey: made.api_key,
          webhookSecret: made.webhook_secret,
          publicKey: made.v1.public_key,
          privateKey: made.v1.private_key,
        },
      };
    },
  });
}

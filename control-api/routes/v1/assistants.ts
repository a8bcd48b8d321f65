import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createAssistantBody, updateAssistantBody } from '../../../core/v1/assistant.ts';
import type { V1Assistants } from '../../../core/v1/assistants.ts';
import { type V1Registry, v1Route } from './http.ts';

const tag = 'Assistants';
const assistantId = z.object({ assistantId: z.string().min(1).max(64) }).strict();
const idParam = z.object({ id: z.string().min(1).max(64) }).strict();
/** `data` of the assistant routes: the Assistant (interface "Assistant (v1)"). */
const assistantData = createAssistantBody.extend({
  _id: z.string(),
  archivedAt: z.string().nullable(),
  createdAt: z.string(),
});

/** `/v1/admin/assistant/*`: list, get, create, update (with its cooldown). */
export function registerAssistantRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  assistants: V1Assistants,
): void {
  v1Route(
    app,
    registry,
    {
      method: 'GET',
      url: '/v1/admin/assistant/list',
      operationId: 'v1ListAssistants',
      summary:
        "Every assistant of the workspace, newest first (at most 500): `{message, data}`; the workspace's v2 agents are assistants too",
      tag,
      data: z.array(assistantData),
      handler: async ({ auth }) => ({
        message: 'assistants fetched',
        data: await assistants.list(auth.workspaceId),
        bare: true,
      }),
    },
    { bare: true },
  );
  v1Route(app, registry, {
    method: 'GET',
    url: '/v1/admin/assistant/get/:assistantId',
    operationId: 'v1GetAssistant',
    summary: 'One assistant',
    tag,
    params: assistantId,
    data: assistantData,
    handler: async ({ auth, params }) => ({
      message: 'assistant fetched',
      data: await assistants.get(auth.workspaceId, params.assistantId),
    }),
  });
  v1Route(app, registry, {
    method: 'POST',
    url: '/v1/admin/assistant/create',
    operationId: 'v1CreateAssistant',
    summary: 'Create an assistant (a v2 agent underneath; see README "Assistant to agent")',
    tag,
    body: createAssistantBody,
    data: assistantData,
    status: 201,
    handler: async ({ auth, body }) => ({
      status: 201,
      message: 'assistant created',
      data: await assistants.create(auth.workspaceId, body),
    }),
  });
  v1Route(app, registry, {
    method: 'PUT',
    url: '/v1/admin/assistant/update/:id',
    operationId: 'v1UpdateAssistant',
    summary:
      'Update an assistant: the fields sent, sections merged one level deep. One update per assistant every 30 seconds; inside that cooldown 429 naming the wait',
    tag,
    params: idParam,
    body: updateAssistantBody,
    data: assistantData,
    handler: async ({ auth, params, body }) => ({
      message: 'assistant updated',
      data: await assistants.update(auth.workspaceId, params.id, body),
    }),
  });
}

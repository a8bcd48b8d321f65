import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../core/errors.ts';
import type { FlowDrafts } from '../../../core/flows/generate.ts';
import type { FlowJobService } from '../../../core/flows/jobs/service.ts';
import type { FlowTranscripts } from '../../../core/flows/transcribe.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { idParams } from '../../schemas/common.ts';
import {
  flowDraftSchema,
  flowRefinementSchema,
  flowTranscriptSchema,
  generateBody,
  refineBody,
  transcribeBody,
} from '../../schemas/flow-jobs.ts';

const tag = 'Flow tests';

export function registerFlowJobRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  jobs: FlowJobService,
  drafts: FlowDrafts,
  transcripts: FlowTranscripts,
): void {
  registerRoutes(app, registry, [
    refineRoute(jobs),
    getRefinementRoute(jobs),
    cancelRefinementRoute(jobs),
    latestRefinementRoute(jobs),
    generateRoute(drafts),
    getDraftRoute(drafts),
    transcribeRoute(transcripts),
  ]);
}

function refineRoute(jobs: FlowJobService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/agents/flow/refine',
    operationId: 'refineFlow',
    summary:
      'Test and fix a flow: simulated calls, review, revision, verification (202 at once; poll the job). 10 per workspace per hour',
    tag,
    body: refineBody,
    responses: { 202: { description: 'The job, running', schema: flowRefinementSchema } },
    errors: ['invalid_request', 'invalid_flow', 'not_found', 'rate_limited', 'model_unavailable'],
    handler: async ({ auth, body, reply }) => {
      const job = await jobs.start(auth.workspaceId, body);
      reply.code(202);
      return job;
    },
  });
}

function getRefinementRoute(jobs: FlowJobService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents/flow/refine/:id',
    operationId: 'getFlowRefinement',
    summary: 'Read a flow test (kept 24 hours)',
    tag,
    params: idParams('flowTest'),
    responses: { 200: { description: 'The job', schema: flowRefinementSchema } },
    errors: ['not_found'],
    handler: async ({ auth, params }) => jobs.get(auth.workspaceId, params.id),
  });
}

function cancelRefinementRoute(jobs: FlowJobService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/agents/flow/refine/:id/cancel',
    operationId: 'cancelFlowRefinement',
    summary:
      'Cancel a running flow test: what had answered is charged, finished rounds are kept. A job that ended is answered unchanged (200)',
    tag,
    params: idParams('flowTest'),
    bodyOptional: true,
    responses: { 200: { description: 'The job', schema: flowRefinementSchema } },
    errors: ['not_found'],
    handler: async ({ auth, params }) => jobs.cancel(auth.workspaceId, params.id),
  });
}

function latestRefinementRoute(jobs: FlowJobService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents/:id/flow/refinement',
    operationId: 'getAgentFlowRefinement',
    summary: 'The latest flow test started with this agent, for 24 hours after it started',
    tag,
    params: idParams('agent'),
    responses: { 200: { description: 'The job', schema: flowRefinementSchema } },
    errors: ['not_found'],
    handler: async ({ auth, params }) => jobs.latestForAgent(auth.workspaceId, params.id),
  });
}

function generateRoute(drafts: FlowDrafts): RouteDefinition {
  return route({
    method: 'POST',
    url: '/agents/flow/generate',
    operationId: 'generateFlow',
    summary:
      'Draft a flow from a brief: 200 with the draft when it is written within the wait (20 s), else 202 with the running draft to poll; charged as one flow_generation transaction',
    tag,
    body: generateBody,
    responses: {
      200: { description: 'The draft, ended (succeeded or failed); not saved', schema: flowDraftSchema },
      202: {
        description: 'The draft, still being written: poll GET .../generate/{id}',
        schema: flowDraftSchema,
      },
    },
    errors: ['invalid_request', 'model_unavailable'],
    handler: async ({ auth, body, reply }) => {
      const { finished, draft } = await drafts.generate(auth.workspaceId, body);
      reply.code(finished ? 200 : 202);
      return draft;
    },
  });
}

function getDraftRoute(drafts: FlowDrafts): RouteDefinition {
  return route({
    method: 'GET',
    url: '/agents/flow/generate/:id',
    operationId: 'getFlowDraft',
    summary: 'Read a flow draft (kept 24 hours)',
    tag,
    params: idParams('flowDraft'),
    responses: { 200: { description: 'The draft', schema: flowDraftSchema } },
    errors: ['not_found'],
    handler: async ({ auth, params }) => drafts.get(auth.workspaceId, params.id),
  });
}

function transcribeRoute(transcripts: FlowTranscripts): RouteDefinition {
  return route({
    method: 'POST',
    url: '/agents/flow/transcribe',
    operationId: 'transcribeForFlow',
    summary:
      'A call of the workspace as an AGENT:/CALLER: transcript, one turn per line (₹18 an hour of audio, once per call); uploaded recordings are not live yet (501)',
    tag,
    body: transcribeBody,
    responses: { 200: { description: 'The transcript', schema: flowTranscriptSchema } },
    errors: ['invalid_request', 'not_found', 'insufficient_balance', 'not_implemented'],
    handler: async ({ auth, body }) => {
      if (body.recording !== undefined) {
        throw new ApiError(
          'not_implemented',
          'uploaded recordings are not transcribed yet: pass call_id of one of your calls',
        );
      }
      if (body.call_id === undefined) throw new ApiError('invalid_request', 'call_id is required');
      return transcripts.ofCall(auth.workspaceId, body.call_id);
    },
  });
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CallArtifacts } from '../../core/calls/artifacts.ts';
import { type Clock, systemClock } from '../../core/clock.ts';
import { ApiError } from '../../core/errors.ts';
import { idPattern } from '../../core/ids.ts';
import { defineRoute, type RouteRegistry } from '../http/route.ts';
import { RecordingLinks } from '../http/signed-url.ts';

/** The same answer for every refusal, so a link never tells whether the call or its recording exists. */
const invalidLink = () => new ApiError('not_found', 'this recording link is invalid or has expired');

/**
 * Downloads behind the signed links that `GET /v2/calls/{id}/recording` redirects to. No API key: the
 * signature is the credential, bound to the workspace, the call and the expiry.
 */
export function registerRecordingRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: { artifacts: CallArtifacts; secretKey: string; clock?: Clock },
): void {
  const links = new RecordingLinks(deps.secretKey);
  const clock = deps.clock ?? systemClock;

  defineRoute(app, registry, {
    method: 'GET',
    url: '/recordings/:workspace_id/:call_id.wav',
    operationId: 'downloadRecording',
    summary: 'Download a call recording (audio/wav, caller left, agent right) through a signed link',
    tag: 'Calls',
    auth: false,
    params: z.object({ workspace_id: z.string().min(1).max(64), call_id: z.string().min(1).max(64) }),
    query: z
      .object({
        expires: z.string().max(20).describe('Unix seconds after which the link stops working'),
        signature: z.string().max(128).describe('Lowercase hex HMAC-SHA256 of the link'),
      })
      .strict(),
    responses: { 200: { description: 'The recording as audio/wav, with Content-Length' } },
    errors: ['invalid_request', 'not_found'],
    handler: async ({ params, query, reply }) => {
      const { workspace_id: workspaceId, call_id: callId } = params;
      const presented = { workspaceId, callId, expires: query.expires, signature: query.signature };
      if (!links.verify(presented, clock.now())) throw invalidLink();
      // Only ids this platform issued reach the artifact store (they become file names).
      if (!idPattern('workspace').test(workspaceId) || !idPattern('call').test(callId)) throw invalidLink();
      const wav = await deps.artifacts.readRecording(workspaceId, callId);
      if (!wav) throw invalidLink();
      return reply
        .type('audio/wav')
        .header('content-length', String(wav.byteLength))
        .header('cache-control', 'private, no-store')
        .send(Buffer.from(wav.buffer, wav.byteOffset, wav.byteLength));
    },
  });
}

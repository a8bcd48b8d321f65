import type { FastifyInstance } from 'fastify';
import { type CallCommand, sendCallCommand } from '../../../core/calls/control.ts';
import { type LiveCallEvent, onLiveEvents } from '../../../core/calls/live-events.ts';
import { callObject } from '../../../core/calls/representation.ts';
import { isTerminal } from '../../../core/calls/state-machine.ts';
import type { Coordinator } from '../../../core/coord/types.ts';
import { ApiError, notFound } from '../../../core/errors.ts';
import { isId } from '../../../core/ids.ts';
import type { CallRecord, Store } from '../../../core/store/types.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { idParams } from '../../schemas/common.ts';
import { liveControlAccepted, liveControlBody } from '../../schemas/live-call.ts';

/** An SSE comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

export interface LiveCallRouteDeps {
  store: Store;
  coord: Coordinator;
}

const tag = 'Calls';
const params = idParams('call');

async function webCallOf(store: Store, workspaceId: string, id: string): Promise<CallRecord> {
  const call = isId('call', id) ? await store.calls.get(workspaceId, id) : undefined;
  if (!call) throw notFound('call');
  if (call.channel !== 'web') {
    throw new ApiError('unsupported_channel', 'live control and live events are for web calls only');
  }
  return call;
}

function controlCallRoute(deps: LiveCallRouteDeps): RouteDefinition {
  return route({
    method: 'POST',
    url: '/calls/:id/control',
    operationId: 'controlCall',
    summary:
      'Live control of a web call in progress: say a line, end the call, mute or unmute the agent, add a message to its context',
    tag,
    params,
    body: liveControlBody,
    responses: { 202: { description: 'Sent to the call', schema: liveControlAccepted } },
    errors: ['invalid_request', 'not_found', 'unsupported_channel', 'conflict'],
    handler: async ({ auth, params: p, body, reply }) => {
      const call = await webCallOf(deps.store, auth.workspaceId, p.id);
      if (call.status !== 'in_progress') {
        throw new ApiError(
          'conflict',
          isTerminal(call.status)
            ? `the call has already ended (${call.status})`
            : `the call is not live yet (${call.status}); control applies once it is in_progress`,
        );
      }
      const command: CallCommand = {
        type: 'control',
        workspaceId: call.workspaceId,
        callId: call.id,
        control: body,
      };
      await sendCallCommand(deps.coord, command);
      reply.code(202);
      return {
        object: 'call_control' as const,
        call_id: call.id,
        action: body.action,
        accepted: true as const,
      };
    },
  });
}

function streamCallEventsRoute(deps: LiveCallRouteDeps): RouteDefinition {
  return route({
    method: 'GET',
    url: '/calls/:id/events',
    operationId: 'streamCallEvents',
    summary:
      'Live events of a web call as Server-Sent Events: call.status (first, and at every change), transcript.partial, transcript.final, caller.turn (recognized: false and empty text when no words were recognised), agent.turn, interruption, latency (recognized says whether the turn answered had words), tool.call (an on_call tool run ended: name, phase, started_at, duration_ms, status, http_status, as in tool_calls on the call); the stream ends after the terminal call.status',
    tag,
    params,
    responses: { 200: { description: 'text/event-stream; each event`s data is one JSON object' } },
    errors: ['not_found', 'unsupported_channel', 'service_unavailable'],
    handler: async ({ auth, params: p, request, reply }) => {
      const first = await webCallOf(deps.store, auth.workspaceId, p.id);
      // Subscribe before the stream starts, so a coordinator that is away answers 503 in the envelope, and
      // before reading the state again, so no change between the two is missed.
      let deliver: (event: LiveCallEvent) => void = () => {};
      const unsubscribe = await onLiveEvents(deps.coord, first.id, (event) => deliver(event));
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let closed = false;
      const send = (event: LiveCallEvent) => {
        if (closed) return;
        out.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        if (event.type === 'call.status' && isTerminal(event.call.status)) finish();
      };
      const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
      deliver = send;
      function finish() {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        void unsubscribe();
        out.end();
      }
      request.raw.on('close', finish);
      const now = await deps.store.calls.get(auth.workspaceId, first.id);
      if (now) send({ type: 'call.status', call: callObject(now) });
      else finish();
    },
  });
}

/**
 * Live control and the live event stream of web calls. Both reach the call through the coordinator: the
 * control command goes to whichever gateway node runs the call, and that node's events come back to whichever
 * API node holds the client's stream. Phone calls answer `400 unsupported_channel`.
 */
export function registerLiveCallRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: LiveCallRouteDeps,
): void {
  registerRoutes(app, registry, [controlCallRoute(deps), streamCallEventsRoute(deps)]);
}

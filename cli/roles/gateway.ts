import path from 'node:path';
import { Counter, Gauge } from 'prom-client';
import { EventLoopLag, NodeAdmission } from '../../core/calls/capacity.ts';
import { GatewayFleet } from '../../core/calls/fleet.ts';
import { publishLiveEvent } from '../../core/calls/live-events.ts';
import { SileroVad } from '../../engines/vad/providers/silero.ts';
import { CallStreams } from '../../gateway/calls/call-streams.ts';
import { startGateway } from '../../gateway/server.ts';
import { LiveTranscriptionService } from '../../gateway/speech/service.ts';
import { PipelineMetrics } from '../../pipeline/metrics.ts';
import type { DrainableCalls } from '../drain.ts';
import type { CallEngines } from '../engines.ts';
import { loopbackHost, type SharedParts, type Teardown } from './parts.ts';
import { buildToolRunner } from './tools.ts';

export interface StartedGateway {
  /** Base URL (ws://) of the media gateway on this machine. */
  readonly url: string;
  readonly liveCalls: DrainableCalls;
  /** Stops taking new streams; the open ones carry on. */
  stopAccepting(): Promise<void>;
}

/** The gateway role: the media gateway, each stream driving one call's pipeline. */
export async function startGatewayRole(
  parts: SharedParts,
  engines: CallEngines,
  teardown: Teardown,
  options: { webhookCa: string | undefined },
): Promise<StartedGateway> {
  const { config, coord, logger } = parts;
  const lag = config.gatewayMaxLoopLagMs > 0 ? new EventLoopLag() : undefined;
  if (lag) teardown.add(async () => lag.stop());
  const admission = new NodeAdmission({
    maxCalls: config.gatewayMaxCalls,
    maxLoopLagMs: config.gatewayMaxLoopLagMs,
    ...(lag ? { lag } : {}),
  });
  const streams = new CallStreams(
    {
      store: parts.store,
      lifecycle: parts.lifecycle,
      slots: parts.slots,
      artifacts: parts.artifacts,
      engines: engines.engines,
      engineNames: engines.names,
      metrics: new PipelineMetrics(parts.metrics),
      partialDir: path.join(config.dataDir, 'recordings', '.partial'),
      nodeId: config.nodeId,
      liveEvents: (callId, event) => {
        publishLiveEvent(coord, callId, event).catch(() => {});
      },
      tools: buildToolRunner(parts, teardown, options.webhookCa),
      clock: parts.clock,
    },
    admission,
  );
  registerAdmissionMetrics(parts, streams, admission, engines);
  await streams.listen(coord);
  teardown.add(() => streams.close());
  const liveTranscription = new LiveTranscriptionService({
    store: parts.store,
    coord,
    tokens: parts.tokens,
    engines: { stt: engines.engines.stt, vad: engines.engines.vad },
    logger,
  });
  const gateway = await startGateway({
    host: config.host,
    port: config.gatewayPort,
    allowFallback: config.gatewayAllowFallback,
    reusePort: config.gatewayReusePort,
    tokens: parts.tokens,
    handlerFactory: streams.handlerFactory,
    endedCallEvent: streams.endedCallEvent,
    liveTranscription,
    registry: parts.metrics,
    logger,
    clock: parts.clock,
  });
  teardown.add(() => gateway.close());
  const leaveFleet = await new GatewayFleet(coord).join(
    config.nodeId,
    (err) => logger.debug({ err }, 'gateway presence not renewed'),
    streams,
  );
  teardown.add(leaveFleet);
  const url = `ws://${loopbackHost(config.host)}:${gateway.port}`;
  logger.info(
    { url, max_calls: admission.maxCalls, max_loop_lag_ms: config.gatewayMaxLoopLagMs || undefined },
    'media gateway listening',
  );
  return {
    url,
    liveCalls: streams,
    stopAccepting: async () => {
      await leaveFleet();
      await gateway.stopAccepting();
    },
  };
}

/**
 * `/metrics` of a node's admission limit and of what it sheds to keep its calls in real time: live calls, the
 * limit, the capacity it publishes now, streams refused at the limit, and VAD windows answered by energy because
 * the model was behind.
 */
function registerAdmissionMetrics(
  parts: SharedParts,
  streams: CallStreams,
  admission: NodeAdmission,
  engines: CallEngines,
): void {
  const registers = [parts.metrics];
  new Gauge({
    name: 'gateway_calls_live',
    help: 'Calls running on this gateway node.',
    registers,
    collect() {
      this.set(streams.live);
    },
  });
  new Gauge({
    name: 'gateway_calls_max',
    help: 'Calls this gateway node takes at most (GATEWAY_MAX_CALLS or its default).',
    registers,
    collect() {
      this.set(admission.maxCalls);
    },
  });
  new Gauge({
    name: 'gateway_calls_capacity',
    help: 'Calls this node tells dialers it can carry now (its live calls only while its event loop runs late).',
    registers,
    collect() {
      this.set(streams.capacity());
    },
  });
  new Counter({
    name: 'gateway_calls_refused_total',
    help: 'Call streams refused because this node was at its limit (their calls end gateway-at-capacity).',
    registers,
    collect() {
      this.reset();
      this.inc(streams.refused);
    },
  });
  const vad = engines.engines.vad;
  if (vad instanceof SileroVad) {
    new Counter({
      name: 'vad_windows_shed_total',
      help: 'VAD windows a call was too far behind to wait for the model on: answered by the energy detector.',
      registers,
      collect() {
        this.reset();
        this.inc(vad.stats.shed);
      },
    });
  }
}

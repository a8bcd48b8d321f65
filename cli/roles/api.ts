import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from '../../control-api/app.ts';
import {
  answerClientError,
  answerUnsupportedExpectation,
  httpServerOptions,
} from '../../control-api/http/connection-limits.ts';
import { type ProductOfRequest, v1ErrorAnswer } from '../../control-api/routes/v1/http.ts';
import type { ApiHttpLimits } from '../../core/config.ts';
import { listenErrorOf } from '../../core/listen-error.ts';
import { VoiceCatalogue } from '../../engines/tts/catalogue.ts';
import { createTextToSpeech } from '../../engines/tts/index.ts';
import { buildFlowModels } from '../flow-models.ts';
import { loopbackHost, type SharedParts, type Teardown } from './parts.ts';

/** The api role: the control API, listening; returns its base URL on this machine. */
export async function startApiRole(parts: SharedParts, teardown: Teardown): Promise<string> {
  const { config, logger } = parts;
  // `POST /v2/speech` speaks with the call engines' voices on a node that has them, else with its own.
  let speaker = parts.engines?.voices;
  if (!speaker) {
    const own = createTextToSpeech({
      espeak: true,
      ...(config.engines.ttsOpenai ? { openai: { apiKey: '', ...config.engines.ttsOpenai } } : {}),
    });
    teardown.add(() => own.close());
    speaker = own;
  }
  const { app, v1 } = await buildApiApp({
    config,
    store: parts.store,
    coord: parts.coord,
    voices: VoiceCatalogue.load(),
    speaker,
    ...(parts.engines
      ? { transcriber: { stt: parts.engines.engines.stt, vad: parts.engines.engines.vad } }
      : {}),
    metrics: parts.metrics,
    logger,
    artifacts: parts.artifacts,
    secretKey: parts.secretKey,
    streamTokens: parts.tokens,
    gatewayUrl: () => config.publicGatewayUrl ?? parts.localGatewayUrl(),
    lifecycle: parts.lifecycle,
    slots: parts.slots,
    speech: parts.engines?.coverage,
    twilioAuthToken: config.twilio?.authToken,
    clock: parts.clock,
    flowModels: buildFlowModels(config),
    flowDraftWaitMs: config.flowJobs.draftWaitMs,
  });
  teardown.add(() => app.close());
  await app.listen({ host: config.host, port: config.port }).catch((error: unknown) => {
    throw listenErrorOf('control API', config.host, config.port, error);
  });
  const address = app.server.address() as AddressInfo;
  const url = `http://${loopbackHost(config.host)}:${address.port}`;
  logger.info({ url }, 'control API listening');
  if (config.v1Port !== undefined) {
    const v1Url = await listenForV1(app, v1, config.host, config.v1Port, config.apiHttp, teardown);
    logger.info({ url: v1Url }, 'legacy v1 API listening');
  }
  return url;
}

/** `V1_PORT`: a second listener whose every request is a v1 request, answered by the same app. */
async function listenForV1(
  app: FastifyInstance,
  product: ProductOfRequest,
  host: string,
  port: number,
  limits: ApiHttpLimits,
  teardown: Teardown,
): Promise<string> {
  const server = http.createServer(httpServerOptions(limits), (request, response) => {
    product.markV1(request);
    app.routing(request, response);
  });
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.timeout = limits.idleTimeoutMs;
  // What Node refuses before any route (malformed HTTP, headers too large, deadlines) and an `Expect` it cannot
  // meet are told in v1's shape here too: every request on this port is a v1 request.
  server.on('clientError', (error, socket) => answerClientError(error, socket, limits, v1ErrorAnswer));
  server.on('checkExpectation', (request, response) =>
    answerUnsupportedExpectation(request, response, (_raw, error) => v1ErrorAnswer(error)),
  );
  teardown.add(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenErrorOf('legacy v1 API', host, port, error)));
    server.listen(port, host, () => resolve());
  });
  return `http://${loopbackHost(host)}:${(server.address() as AddressInfo).port}`;
}

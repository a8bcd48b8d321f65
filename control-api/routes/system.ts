import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Coordinator } from '../../core/coord/types.ts';
import type { Store } from '../../core/store/types.ts';
import type { SpeechCoverage } from '../../engines/stt/coverage.ts';
import type { RouteRegistry } from '../http/route.ts';
import { buildOpenApi } from '../openapi.ts';

/** Unauthenticated operational routes: the contract, health and metrics. */
export function registerSystemRoutes(
  app: FastifyInstance,
  deps: {
    registry: RouteRegistry;
    store: Store;
    coord: Coordinator;
    metrics: Registry;
    serverUrl?: string;
    /** This node's speech-to-text coverage, when it runs calls. */
    speech?: SpeechCoverage;
  },
): void {
  let document: string | undefined;
  app.get('/openapi.json', async (_request, reply) => {
    document ??= JSON.stringify(
      buildOpenApi(deps.registry, deps.serverUrl ? { serverUrl: deps.serverUrl } : {}),
    );
    return reply.type('application/json; charset=utf-8').send(document);
  });

  app.get('/healthz', async (_request, reply) => {
    const [store, coordinator] = await Promise.all([deps.store.ping(), deps.coord.ping()]);
    const ok = store && coordinator;
    return reply.code(ok ? 200 : 503).send({
      status: ok ? 'ok' : 'degraded',
      store: { dialect: deps.store.dialect, ok: store },
      coordinator: { kind: deps.coord.kind, ok: coordinator },
      ...(deps.speech ? { engines: { speech_to_text: deps.speech } } : {}),
    });
  });

  app.get('/metrics', async (_request, reply) =>
    reply.type(deps.metrics.contentType).send(await deps.metrics.metrics()),
  );
}

import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Request counts and latencies by route template (never by raw URL, so ids do not explode cardinality). */
export function registerHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'api_http_requests_total',
    help: 'HTTP requests answered by the control API',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'api_http_request_duration_seconds',
    help: 'Control API request duration',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
}

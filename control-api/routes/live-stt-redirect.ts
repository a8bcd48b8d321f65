import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../core/errors.ts';
import { LIVE_STT_PATH } from '../../core/speech/languages.ts';
import { defineRoute, type RouteRegistry } from '../http/route.ts';
import { setEnvelopeErrorHandler } from '../plugins/errors.ts';

/**
 * Live speech to text is served by the media gateway (uWebSockets.js), not by the API. A client that opens it
 * on the API port is redirected (`308`, the query kept) to the gateway's URL: the `ws` library and most server
 * clients follow it when told to (`followRedirects`); a browser does not, so browsers take the `url` that
 * `POST /v2/stream-tokens` answers with.
 */
export function registerLiveSttRedirect(
  app: FastifyInstance,
  registry: RouteRegistry,
  gatewayUrl: () => string | undefined,
): void {
  app.register(async (scope) => {
    setEnvelopeErrorHandler(scope, { bodyLimitBytes: 1024 });
    defineRoute(scope, registry, {
      method: 'GET',
      url: LIVE_STT_PATH,
      operationId: 'liveSpeechToText',
      summary:
        'Live speech to text (WebSocket). Served by the media gateway: this port answers 308 to the gateway URL with the same query. Query: language_code (hi-IN, en-IN, gu-IN, mr-IN, pa-IN, bn-IN, ta-IN, te-IN, kn-IN, ml-IN), encoding (pcm16, mulaw, alaw), sample_rate (8000, 16000), endpointing (manual, auto), token (a stream token, instead of the Authorization header). Client frames {event: speech_start | audio_input (audio: base64) | speech_end | end} or binary audio; server events session.begin, transcript.partial, transcript.final, session.end (audio_seconds_billed, cost_paise), error (code). The protocol: gateway/speech/PROTOCOL.md',
      tag: 'Speech',
      auth: false,
      responses: {
        308: {
          description: 'The gateway WebSocket URL, the query kept',
          headers: { Location: 'wss://<gateway>/v1/audio/transcriptions/stream?...' },
        },
      },
      errors: ['not_found'],
      handler: async ({ request, reply }) => {
        const gateway = gatewayUrl();
        if (!gateway)
          throw new ApiError(
            'not_found',
            'live speech to text is served by the media gateway, and no gateway is known to this API node (set PUBLIC_GATEWAY_URL)',
          );
        const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
        return reply
          .code(308)
          .header('location', `${gateway.replace(/\/+$/, '')}${LIVE_STT_PATH}${query}`)
          .send();
      },
    });
  });
}

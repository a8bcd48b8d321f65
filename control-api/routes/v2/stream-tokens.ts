import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { mintSpeechToken } from '../../../core/auth/speech-tokens.ts';
import type { StreamTokens } from '../../../core/auth/stream-tokens.ts';
import { type Clock, isoTime, systemClock } from '../../../core/clock.ts';
import { LIVE_STT_PATH, SPEECH_LANGUAGES } from '../../../core/speech/languages.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';
import { timestamp } from '../../schemas/common.ts';

const mintBody = z
  .object({
    ttl_secs: z.number().int().min(10).max(600).default(60).describe('how long the token is good for'),
    language_code: z
      .enum(SPEECH_LANGUAGES)
      .optional()
      .describe('binds the token to this language: a session in another one is refused'),
  })
  .strict();

const tokenSchema = z.object({
  object: z.literal('stream_token'),
  token: z.string().describe('single use: `?token=` on the live speech-to-text WebSocket'),
  expires_at: timestamp,
  language_code: z.enum(SPEECH_LANGUAGES).nullable(),
  url: z
    .string()
    .nullable()
    .describe('the gateway WebSocket URL to open with the token (null when no gateway is known)'),
});

export interface StreamTokenDeps {
  streamTokens: StreamTokens;
  gatewayUrl: () => string | undefined;
  clock?: Clock;
}

/** `POST /v2/stream-tokens`: one-time tokens for browsers to open live speech to text without a key. */
export function registerStreamTokenRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: StreamTokenDeps,
): void {
  const clock = deps.clock ?? systemClock;
  defineRoute(app, registry, {
    method: 'POST',
    url: '/stream-tokens',
    operationId: 'mintStreamToken',
    summary: 'Mint a single-use token, bound to the workspace, for the live speech-to-text WebSocket',
    tag: 'Speech',
    body: mintBody,
    bodyOptional: true,
    responses: { 201: { description: 'The token', schema: tokenSchema } },
    errors: ['invalid_request'],
    handler: async ({ auth, body, reply }) => {
      const ttlSecs = body?.ttl_secs ?? 60;
      const language = body?.language_code;
      const token = mintSpeechToken(deps.streamTokens, {
        workspaceId: auth.workspaceId,
        ttlMs: ttlSecs * 1000,
        ...(language ? { language } : {}),
      });
      const gateway = deps.gatewayUrl();
      reply.code(201);
      return {
        object: 'stream_token' as const,
        token,
        expires_at: isoTime(clock.now() + ttlSecs * 1000),
        language_code: language ?? null,
        url: gateway ? `${gateway.replace(/\/+$/, '')}${LIVE_STT_PATH}` : null,
      };
    },
  });
}

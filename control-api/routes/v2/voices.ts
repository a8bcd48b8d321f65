import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { paiseToRupees } from '../../../core/money.ts';
import { SPEECH_PER_1000_CHARS_PAISE } from '../../../core/speech/prices.ts';
import type { VoiceCatalogue } from '../../../engines/tts/catalogue.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';

const voiceSchema = z.object({
  id: z.string(),
  object: z.literal('voice'),
  name: z.string(),
  language: z.string(),
  languages: z.array(z.string()),
  gender: z.enum(['male', 'female', 'neutral']),
  engine: z.enum(['espeak', 'openai']),
  description: z.string(),
  price_per_1000_chars_paise: z
    .number()
    .int()
    .describe('what `POST /v2/speech` costs with this voice per 1,000 characters (by voice family)'),
  price_per_1000_chars_inr: z.number(),
});

export function registerVoiceRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  catalogue: VoiceCatalogue,
): void {
  defineRoute(app, registry, {
    method: 'GET',
    url: '/voices',
    operationId: 'listVoices',
    summary: 'The voice catalogue; filter with `language`, `gender` or `engine`',
    tag: 'Voices',
    query: z
      .object({
        language: z.string().max(35).optional(),
        gender: z.enum(['male', 'female', 'neutral']).optional(),
        engine: z.enum(['espeak', 'openai']).optional(),
      })
      .strict(),
    responses: {
      200: {
        description: 'Every voice that matches',
        schema: z.object({
          object: z.literal('list'),
          data: z.array(voiceSchema),
          has_more: z.literal(false),
        }),
      },
    },
    errors: ['invalid_request'],
    handler: async ({ query }) => {
      const data = catalogue.voices
        .filter((v) => !query.language || v.languages.includes(query.language))
        .filter((v) => !query.gender || v.gender === query.gender)
        .filter((v) => !query.engine || v.engine === query.engine)
        .map((v) => ({
          id: v.id,
          object: 'voice' as const,
          name: v.name,
          language: v.language,
          languages: v.languages,
          gender: v.gender,
          engine: v.engine,
          description: v.description,
          price_per_1000_chars_paise: SPEECH_PER_1000_CHARS_PAISE[v.engine],
          price_per_1000_chars_inr: paiseToRupees(SPEECH_PER_1000_CHARS_PAISE[v.engine]),
        }));
      return { object: 'list' as const, data, has_more: false as const };
    },
  });
}

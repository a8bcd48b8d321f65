import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.ts';
import type { ApiKeyRepo } from '../../core/store/types.ts';

export interface AuthContext {
  workspaceId: string;
  keyId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
  interface FastifyContextConfig {
    authenticated?: boolean;
  }
}

const BEARER = 'Bearer ';
/** `sk_live_` + 32 hex; anything longer is refused before touching the store. */
const MAX_KEY_LENGTH = 128;

export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new ApiError('unauthorized', 'authentication required');
  return request.auth;
}

/**
 * v2 authentication: `Authorization: Bearer <API_KEY>`. Missing header, no `Bearer ` prefix or an unknown key
 * answer 401 unauthorized; a revoked key answers 403 forbidden (its only cause).
 */
export function registerBearerAuth(app: FastifyInstance, keys: ApiKeyRepo): void {
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config?.authenticated) return;
    const header = request.headers.authorization;
    if (!header) throw new ApiError('unauthorized', 'missing Authorization header');
    if (!header.startsWith(BEARER))
      throw new ApiError('unauthorized', 'Authorization header must be "Bearer <API_KEY>"');
    const key = header.slice(BEARER.length).trim();
    if (!key || key.length > MAX_KEY_LENGTH) throw new ApiError('unauthorized', 'unknown API key');
    const record = await keys.findByKey(key);
    if (!record) throw new ApiError('unauthorized', 'unknown API key');
    if (record.revokedAt !== null) throw new ApiError('forbidden', 'this API key was revoked');
    request.auth = { workspaceId: record.workspaceId, keyId: record.id };
  });
}

/**
 * The media gateway's public surface, for the composition root (cli/serve.ts) and the sandbox carrier.
 * See README.md beside this file.
 */
export type { CarrierName, MediaFormat } from './carriers/types.ts';
export { CLOSE, type CloseReason } from './close-codes.ts';
export type {
  MediaHandler,
  MediaHandlerFactory,
  MediaOutput,
  PlaybackAck,
  StreamContext,
  StreamEnd,
} from './handler.ts';
export { echoHandler } from './handlers/echo.ts';
export { type ToneOptions, toneHandlerFactory } from './handlers/tone.ts';
export { DEFAULT_GATEWAY_LIMITS, type GatewayLimits } from './limits.ts';
export type { StreamSummary } from './media-session.ts';
export {
  FallbackRefusedError,
  type Gateway,
  type GatewayOptions,
  type GatewayStats,
  startGateway,
} from './server.ts';
export {
  MAX_TOKEN_TTL_MS,
  MemoryTokenClaims,
  StreamTokens,
  type TokenClaims,
  type TokenRejection,
  type TokenVerdict,
} from './tokens.ts';

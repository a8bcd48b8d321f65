/** Stream tokens live in core (the API mints them for web calls); the gateway verifies them. */
export * from '../core/auth/stream-tokens.ts';

/**
 * The environment of a platform process under benchmark: only what a Node process needs from outside (no
 * inherited DATABASE_URL, REDIS_URL, PORT or NODE_OPTIONS), loopback, warnings only, and rate limits far above
 * anything the benchmark reaches so the per-key token bucket never answers 429.
 */
export function platformEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    API_RATE_PER_SEC: '100000000',
    API_RATE_BURST: '100000000',
    ...extra,
  };
}

/** The engine settings of this environment (README "Configuration"), so calls can run on remote engines. */
export function engineEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && /^(LLM|STT|TTS)_/.test(name)) env[name] = value;
  }
  return env;
}

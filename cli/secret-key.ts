import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config.ts';

/**
 * The server secret that signs stream tokens and recording URLs. SECRET_KEY wins; otherwise one is generated on
 * first start and kept in DATA_DIR/secret.key (0600). Several nodes must share SECRET_KEY.
 */
export function resolveSecretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const file = path.join(config.dataDir, 'secret.key');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(config.dataDir, { recursive: true });
    const key = randomBytes(32).toString('hex');
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  }
}

import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { openStore } from '../core/store/index.ts';
import type { Store } from '../core/store/types.ts';

/** The store the configuration names: PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR. */
export function openConfiguredStore(config: Config, clock?: Clock): Promise<Store> {
  return openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    clock,
  });
}

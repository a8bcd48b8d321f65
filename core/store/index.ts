import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { Wallet } from '../billing/ledger.ts';
import { type Clock, systemClock } from '../clock.ts';
import type { Database } from './db.ts';
import { type DialectName, openPostgres, openSqlite } from './dialects.ts';
import { migrateToLatest } from './migrations/index.ts';
import { AgentStore } from './repos/agents.ts';
import { ApiKeyStore } from './repos/api-keys.ts';
import { CallStore } from './repos/calls.ts';
import { CampaignStore } from './repos/campaigns.ts';
import { DncStore } from './repos/dnc.ts';
import { EventStore } from './repos/events.ts';
import { FlowJobStore } from './repos/flow-jobs.ts';
import { IdempotencyStore } from './repos/idempotency.ts';
import { PhoneNumberStore } from './repos/phone-numbers.ts';
import { PhonePoolStore } from './repos/phone-pools.ts';
import { SecretStore } from './repos/secrets.ts';
import { SpeechStore } from './repos/speech.ts';
import { TelephonyStore } from './repos/telephony.ts';
import { ToolRunStore } from './repos/tool-runs.ts';
import { ToolSecretStore } from './repos/tool-secrets.ts';
import { TranscriptionStore } from './repos/transcriptions.ts';
import { V1Store } from './repos/v1.ts';
import { WorkspaceStore } from './repos/workspaces.ts';
import { Scope } from './scope.ts';
import type { Repositories, Store } from './types.ts';

export * from './types.ts';

export const SQLITE_FILE_NAME = 'voiceagent.db';

export interface StoreOptions {
  /** `postgres://` or `postgresql://`; when absent the store is SQLite in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  /** SQLite only: `:memory:` (tests), or a file path (relative paths are taken from `dataDir`). */
  sqliteFile?: ':memory:' | string;
  /** PostgreSQL only: the schema to create (if missing) and work in; default: the server's search_path. */
  schema?: string;
  clock?: Clock;
}

function repositories(scope: Scope): Repositories {
  return {
    workspaces: new WorkspaceStore(scope),
    apiKeys: new ApiKeyStore(scope),
    secrets: new SecretStore(scope),
    agents: new AgentStore(scope),
    wallet: new Wallet(scope),
    idempotency: new IdempotencyStore(scope),
    calls: new CallStore(scope),
    events: new EventStore(scope),
    toolSecrets: new ToolSecretStore(scope),
    toolRuns: new ToolRunStore(scope),
    dnc: new DncStore(scope),
    campaigns: new CampaignStore(scope),
    phoneNumbers: new PhoneNumberStore(scope),
    phonePools: new PhonePoolStore(scope),
    telephony: new TelephonyStore(scope),
    speech: new SpeechStore(scope),
    flowJobs: new FlowJobStore(scope),
    transcriptions: new TranscriptionStore(scope),
    v1: new V1Store(scope),
  };
}

class SqlStore implements Store {
  readonly workspaces: Repositories['workspaces'];
  readonly apiKeys: Repositories['apiKeys'];
  readonly secrets: Repositories['secrets'];
  readonly agents: Repositories['agents'];
  readonly wallet: Repositories['wallet'];
  readonly idempotency: Repositories['idempotency'];
  readonly calls: Repositories['calls'];
  readonly events: Repositories['events'];
  readonly toolSecrets: Repositories['toolSecrets'];
  readonly toolRuns: Repositories['toolRuns'];
  readonly dnc: Repositories['dnc'];
  readonly campaigns: Repositories['campaigns'];
  readonly phoneNumbers: Repositories['phoneNumbers'];
  readonly phonePools: Repositories['phonePools'];
  readonly telephony: Repositories['telephony'];
  readonly speech: Repositories['speech'];
  readonly flowJobs: Repositories['flowJobs'];
  readonly transcriptions: Repositories['transcriptions'];
  readonly v1: Repositories['v1'];

  constructor(
    private readonly scope: Scope,
    private readonly db: Kysely<Database>,
  ) {
    const repos = repositories(scope);
    this.workspaces = repos.workspaces;
    this.apiKeys = repos.apiKeys;
    this.secrets = repos.secrets;
    this.agents = repos.agents;
    this.wallet = repos.wallet;
    this.idempotency = repos.idempotency;
    this.calls = repos.calls;
    this.events = repos.events;
    this.toolSecrets = repos.toolSecrets;
    this.toolRuns = repos.toolRuns;
    this.dnc = repos.dnc;
    this.campaigns = repos.campaigns;
    this.phoneNumbers = repos.phoneNumbers;
    this.phonePools = repos.phonePools;
    this.telephony = repos.telephony;
    this.speech = repos.speech;
    this.flowJobs = repos.flowJobs;
    this.transcriptions = repos.transcriptions;
    this.v1 = repos.v1;
  }

  get dialect(): DialectName {
    return this.scope.dialect;
  }

  transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.scope.transaction((scope) => fn(repositories(scope)));
  }

  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.scope.db);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** Opens the database named by the options and brings its schema to the latest migration. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const clock = options.clock ?? systemClock;
  let dialect: DialectName;
  let db: Kysely<Database>;
  if (options.databaseUrl) {
    const protocol = new URL(options.databaseUrl).protocol;
    if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
      throw new RangeError(`databaseUrl: expected postgres:// or postgresql://, got ${protocol}`);
    }
    dialect = 'postgres';
    db = await openPostgres(options.databaseUrl, options.schema);
  } else {
    const file = options.sqliteFile ?? SQLITE_FILE_NAME;
    dialect = 'sqlite';
    db = openSqlite(file === ':memory:' ? file : path.resolve(options.dataDir, file));
  }
  try {
    await migrateToLatest(db, dialect === 'postgres' ? options.schema : undefined);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return new SqlStore(Scope.create(dialect, clock, db), db);
}

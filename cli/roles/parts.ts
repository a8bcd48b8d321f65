import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { StreamTokens } from '../../core/auth/stream-tokens.ts';
import type { CallArtifacts } from '../../core/calls/artifacts.ts';
import type { CallLifecycle } from '../../core/calls/lifecycle.ts';
import type { LiveCallSlots } from '../../core/calls/live-slots.ts';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import type { Coordinator } from '../../core/coord/types.ts';
import type { Store } from '../../core/store/types.ts';
import type { PostCallTools } from '../../core/tools/post-call.ts';
import type { CallEngines } from '../engines.ts';

/** What every role of one process shares, built once by the composition root. */
export interface SharedParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly store: Store;
  readonly coord: Coordinator;
  readonly artifacts: CallArtifacts;
  readonly secretKey: string;
  /** Writes each post_call tool's delivery at settlement, and renders its target when it is sent. */
  readonly postCallTools: PostCallTools;
  readonly slots: LiveCallSlots;
  readonly lifecycle: CallLifecycle;
  readonly tokens: StreamTokens;
  /** The speech and language engines, on a node that runs calls (gateway or worker). */
  readonly engines: CallEngines | undefined;
  /** Where this node's own gateway listens, once the gateway role started. */
  readonly localGatewayUrl: () => string | undefined;
}

export type Closer = () => Promise<void>;

/**
 * What a started part needs done on the way out, in reverse order of starting. A role adds each closer as
 * soon as its part runs, so a role that fails halfway leaves nothing running.
 */
export class Teardown {
  private readonly closers: Closer[] = [];

  add(closer: Closer): void {
    this.closers.push(closer);
  }

  /** Closes everything, in reverse order; the first failure is rethrown after the rest ran. */
  async run(options: { ignoreErrors: boolean }): Promise<void> {
    let failure: unknown;
    for (const close of this.closers.splice(0).reverse()) {
      await close().catch((error: unknown) => {
        if (!options.ignoreErrors) failure ??= error;
      });
    }
    if (failure !== undefined) throw failure;
  }
}

/** The address to reach a server bound to `host` from this machine. */
export function loopbackHost(host: string): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return reachable.includes(':') ? `[${reachable}]` : reachable;
}

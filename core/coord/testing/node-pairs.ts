import { Redis } from 'ioredis';
import type { Clock } from '../../clock.ts';
import { redisUrl, uniqueName } from '../../testing/services.ts';
import { MemoryCoordinator } from '../memory.ts';
import { RedisCoordinator } from '../redis.ts';
import type { Coordinator } from '../types.ts';

/** Where a suite about several worker nodes runs: in one process (memory) or on Redis (two real clients). */
export interface CoordinatorPairTarget {
  readonly name: 'memory' | 'redis';
  /** Two handles on one coordination state: the same coordinator (memory) or two Redis clients (two nodes). */
  open(clock: Clock): [Coordinator, Coordinator];
  /** Deletes every key the suite made. */
  cleanup(): Promise<void>;
  /**
   * What a Redis restart without persistence (or a flush) does to the pair opened last: every key gone.
   * Absent for the memory target, whose state cannot be lost while its holders live.
   */
  loseState?(): Promise<void>;
}

/** The memory target always; the Redis target when the run provides Redis. Keys are prefixed by `suite`. */
export async function coordinatorPairTargets(suite: string): Promise<CoordinatorPairTarget[]> {
  const targets: CoordinatorPairTarget[] = [
    {
      name: 'memory',
      open: (clock) => {
        const coord = new MemoryCoordinator({ clock });
        return [coord, coord];
      },
      cleanup: async () => {},
    },
  ];
  const url = await redisUrl();
  if (url) {
    const runPrefix = uniqueName(suite);
    let opened = 0;
    const deleteKeys = async (pattern: string) => {
      const admin = new Redis(url);
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        if (keys.length > 0) await admin.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await admin.quit();
    };
    targets.push({
      name: 'redis',
      open: (clock) => {
        const keyPrefix = `${runPrefix}:${++opened}`;
        return [
          new RedisCoordinator({ url, clock, keyPrefix }),
          new RedisCoordinator({ url, clock, keyPrefix }),
        ];
      },
      cleanup: () => deleteKeys(`${runPrefix}:*`),
      loseState: () => deleteKeys(`${runPrefix}:${opened}:*`),
    });
  }
  return targets;
}

import type { Logger } from '../logger.ts';
import { createMemoryPubSub } from './memory.ts';
import { createRedisPubSub } from './redis.ts';
import type { PubSub } from './types.ts';

export type { PubSub, Topic, TopicMap } from './types.ts';

/**
 * The channel prefix of the replicas of one store. Redis channels are global to a server (whatever
 * the database number in the URL), so deployments sharing a Redis are kept apart by their stores'
 * identities: replicas of one store hear each other, and nobody else.
 */
export function channelPrefixOf(storeIdentity: string): string {
  return `bank-subgraph:${storeIdentity}:`;
}

/** Options of `createPubSub`; `channelPrefix` (see channelPrefixOf) and `connectTimeoutMs` apply to Redis only. */
export interface CreatePubSubOptions {
  logger: Logger;
  channelPrefix: string;
  connectTimeoutMs?: number;
}

/** The pub/sub backend named by `url`: `memory:`, or `redis://…` / `rediss://…`. */
export async function createPubSub(url: string, options: CreatePubSubOptions): Promise<PubSub> {
  const { logger, channelPrefix, connectTimeoutMs } = options;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'memory') return createMemoryPubSub({ logger });
  if (scheme === 'redis' || scheme === 'rediss') {
    return createRedisPubSub(url, { logger, channelPrefix, connectTimeoutMs });
  }
  // The URL itself is not repeated: it may hold a password.
  throw new Error('PUBSUB_URL must be memory: or redis://… (rediss:// for TLS)');
}

import { Redis, type RedisOptions } from 'ioredis';
import { withinDeadline } from '../async/deadline.ts';
import type { Logger } from '../logger.ts';
import { createTopicListeners } from './listeners.ts';
import type { PubSub, Topic, TopicMap } from './types.ts';

/** How long creation waits for both connections to be ready, by default. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** A reply slower than this counts as Redis being unreachable (readiness, publish). */
const COMMAND_TIMEOUT_MS = 2_000;

/** Options of the Redis backend; `connectTimeoutMs` bounds creation. */
export interface RedisPubSubOptions {
  logger: Logger;
  channelPrefix: string;
  connectTimeoutMs?: number;
}

type Role = 'publisher' | 'subscriber';

/**
 * Pub/sub shared by every replica through one Redis server: a publisher and a subscriber
 * connection. Resolves once both are ready, or once `connectTimeoutMs` has passed without them:
 * a replica that starts while Redis is down must still start (a Redis outage only delays live
 * delivery, and must not take replicas out of the load balancer), so it says so, naming the cause
 * but never the URL (it may hold a password), and joins once Redis answers.
 */
export async function createRedisPubSub(url: string, options: RedisPubSubOptions): Promise<PubSub> {
  const { logger, channelPrefix, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS } = options;
  const publisher = openConnection(url, 'publisher', connectTimeoutMs);
  const subscriber = openConnection(url, 'subscriber', connectTimeoutMs);
  // Messages published while the subscriber connection is down never arrive: whoever relies on
  // live delivery is told, so it can catch up from the store.
  const interruptionListeners = new Set<() => void>();
  const interrupted = () => {
    for (const listener of [...interruptionListeners]) listener();
  };
  const link = watchLink({ publisher, subscriber }, logger, interrupted);

  if (!(await allReady([publisher, subscriber], connectTimeoutMs))) {
    link.startedDown();
    logger.warn(
      { error: link.lastError() ?? 'no reply', waitedMs: connectTimeoutMs },
      'Redis pub/sub (PUBSUB_URL) is not reachable: starting without it; live delivery goes on from the store every second, and replicas wake each other once it answers',
    );
  }

  return createRedisPort({ publisher, subscriber, link, interruptionListeners, logger, channelPrefix });
}

/**
 * The port over the two connections. Each topic is one channel (`<prefix><topic>`), subscribed once
 * and kept until `close()`; listeners come and go locally, so unsubscribing never sends a command
 * (nothing can fail or hang while Redis is down). SUBSCRIBE is awaited for Redis's acknowledgement,
 * so a subscription is live when it resolves. Not graphql-redis-subscriptions' RedisPubSub: when the
 * first SUBSCRIBE of a channel fails (Redis down) it leaves an internal promise rejected with no
 * handler, and an unhandled rejection ends the process; its unsubscribe has the same flaw.
 */
function createRedisPort(parts: {
  publisher: Redis;
  subscriber: Redis;
  link: Link;
  interruptionListeners: Set<() => void>;
  logger: Logger;
  channelPrefix: string;
}): PubSub {
  const { publisher, subscriber, channelPrefix, interruptionListeners } = parts;
  const listeners = createTopicListeners<Topic>(parts.logger, 'redis');
  // SUBSCRIBE per channel, in flight or acknowledged; a failed one is forgotten so the next tries again.
  const subscribed = new Map<string, Promise<unknown>>();
  // Channels asked for while Redis was down, subscribed once the connection is ready (ioredis renews
  // only those it had subscribed before a loss).
  const awaited = new Set<string>();
  subscriber.on('message', (channel: string, message: string) => {
    if (channel.startsWith(channelPrefix)) listeners.dispatch(channel.slice(channelPrefix.length) as Topic, message);
  });
  let closing: Promise<void> | undefined;
  const assertOpen = () => {
    if (closing) throw new Error('redis pub/sub is closed');
  };
  const subscribeOnce = (channel: string) => {
    let live = subscribed.get(channel);
    if (live === undefined) {
      subscribed.set(channel, (live = subscriber.subscribe(channel)));
      live.catch(() => subscribed.get(channel) === live && subscribed.delete(channel));
    }
    return live;
  };
  subscriber.on('ready', () => {
    for (const channel of awaited) {
      subscribeOnce(channel).then(
        () => awaited.delete(channel),
        () => undefined,
      );
    }
  });

  return {
    kind: 'redis',
    async publish<K extends Topic>(topic: K, payload: TopicMap[K]) {
      assertOpen();
      await publisher.publish(channelPrefix + topic, JSON.stringify(payload));
    },
    async subscribe<K extends Topic>(topic: K, listener: (payload: TopicMap[K]) => void) {
      assertOpen();
      // Added before the channel is live: a message arriving with the SUBSCRIBE reply is not lost.
      const remove = listeners.add(topic, listener as (payload: object) => void);
      const channel = channelPrefix + topic;
      try {
        await subscribeOnce(channel);
        assertOpen();
      } catch (error) {
        if (closing || subscriber.status === 'ready') {
          remove();
          throw error;
        }
        // Redis is down: live once it answers; meanwhile what would wake the listener is read from the store on its timer.
        awaited.add(channel);
      }
      return async () => remove();
    },
    onInterruption(listener) {
      interruptionListeners.add(listener);
      return () => void interruptionListeners.delete(listener);
    },
    get connected() {
      return !closing && parts.link.up;
    },
    close() {
      closing ??= (async () => {
        listeners.clear();
        interruptionListeners.clear();
        parts.link.stop();
        await Promise.all([release(publisher), release(subscriber)]);
      })();
      return closing;
    },
  };
}

/**
 * One connection, tuned to fail fast while Redis is down and to heal by itself: no offline queue
 * and no per-command retries (ping and publish reject at once instead of waiting for a reconnect),
 * a command timeout for a server that stops answering, and reconnection forever with capped
 * backoff, after which ioredis re-subscribes the subscriber's channels.
 */
function openConnection(url: string, role: Role, connectTimeoutMs: number): Redis {
  const options: RedisOptions = {
    connectionName: `bank-subgraph-${role}`,
    connectTimeout: connectTimeoutMs,
    commandTimeout: COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResubscribe: true,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  };
  try {
    return new Redis(url, options);
  } catch {
    throw new Error('PUBSUB_URL is not a valid redis:// or rediss:// URL');
  }
}

/** Whether both connections are up, and the last error either gave (for creation's message). */
interface Link {
  readonly up: boolean;
  lastError(): string | undefined;
  /** Creation gave up waiting: the first time both are ready is logged as the link's return. */
  startedDown(): void;
  stop(): void;
}

/**
 * Watches both connections as one link to the other replicas: it is up while both are ready. Its loss
 * is logged once (a warning) and its return once, however many reconnect attempts lie between;
 * `onInterrupted` is called once per loss of the subscriber connection, whose messages are then lost.
 */
function watchLink(clients: Record<Role, Redis>, logger: Logger, onInterrupted: () => void): Link {
  const ready: Record<Role, boolean> = { publisher: false, subscriber: false };
  let lastError: string | undefined;
  let up = false;
  let wasUp = false;
  let stopped = false;
  const update = () => {
    const now = ready.publisher && ready.subscriber;
    if (now === up || stopped) return;
    up = now;
    if (now && wasUp) logger.info('Redis pub/sub link restored: replicas wake each other again');
    if (!now) logger.warn({ error: lastError }, 'Redis pub/sub link lost: live delivery goes on from the store every second; reconnecting');
    wasUp ||= now;
  };
  for (const role of ['publisher', 'subscriber'] as const) {
    const client = clients[role];
    // Always listening: an 'error' without a listener would be printed by ioredis itself.
    client.on('error', (error: unknown) => {
      lastError = describeError(error);
      logger.debug({ role, error: lastError }, 'Redis pub/sub connection error');
    });
    client.on('close', () => {
      const lost = ready[role];
      ready[role] = false;
      if (lost && role === 'subscriber' && !stopped) onInterrupted();
      update();
    });
    client.on('ready', () => {
      ready[role] = true;
      update();
    });
  }
  return {
    get up() {
      return up;
    },
    lastError: () => lastError,
    startedDown: () => void (wasUp = true),
    stop: () => void (stopped = true),
  };
}

/** True once every client is ready, false when `timeoutMs` passes first. */
async function allReady(clients: Redis[], timeoutMs: number): Promise<boolean> {
  const cleanups: Array<() => void> = [];
  const ready = clients.map(
    (client) =>
      new Promise<void>((resolve) => {
        if (client.status === 'ready') return resolve();
        client.once('ready', resolve);
        cleanups.push(() => client.off('ready', resolve));
      }),
  );
  try {
    return await withinDeadline(
      Promise.all(ready).then(() => true),
      timeoutMs,
      false,
    );
  } finally {
    for (const cleanup of cleanups) cleanup();
  }
}

/** QUIT when connected (pending replies arrive first), else drop the socket and stop reconnecting. */
async function release(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // Fall through: the connection went away meanwhile.
    }
  }
  client.disconnect();
}

/**
 * A short cause safe to show: a socket error code (ECONNREFUSED) or a Redis error word (WRONGPASS,
 * NOAUTH), never a message that could carry the host or the URL.
 */
function describeError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code)) return code;
  const word = error instanceof Error ? /^([A-Z][A-Z_]+)\b/.exec(error.message)?.[1] : undefined;
  return word ?? 'connection error';
}

import type { Logger } from '../logger.ts';
import type { PubSub, Topic, TopicMap } from './types.ts';

/** What a backend carries: JSON text on named channels. */
export interface ChannelEngine {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the channel is live (for Redis: SUBSCRIBE acknowledged). */
  subscribe(channel: string, onMessage: (message: unknown) => void): Promise<unknown>;
}

/** One backend: its engine, and how to check and release what it holds. */
export interface PubSubBackend {
  kind: PubSub['kind'];
  engine: ChannelEngine;
  /** See PubSub.onInterruption; absent for a backend that cannot lose messages (memory). */
  onInterruption?(listener: () => void): () => void;
  ping(): Promise<void>;
  close(): Promise<void>;
}

type Listener = (payload: unknown) => void;

interface Channel {
  listeners: Set<Listener>;
  live: Promise<unknown>;
}

interface Options {
  logger: Logger;
  channelPrefix: string;
}

/**
 * The typed topic map over any backend. Each topic is one channel (`<prefix><topic>`) subscribed
 * once per instance and kept until `close()`; listeners come and go locally. So unsubscribing never
 * sends a command to the backend (nothing can fail or hang while Redis is down), and a slow or
 * failing listener never affects the others or the publisher.
 */
export function createTopicPubSub(backend: PubSubBackend, options: Options): PubSub {
  const channels = openChannels(backend, options);
  let closing: Promise<void> | undefined;
  const assertOpen = () => {
    if (closing) throw new Error(`${backend.kind} pub/sub is closed`);
  };

  return {
    kind: backend.kind,
    async publish<K extends Topic>(topic: K, payload: TopicMap[K]): Promise<void> {
      assertOpen();
      await backend.engine.publish(options.channelPrefix + topic, JSON.stringify(payload));
    },
    async subscribe<K extends Topic>(topic: K, listener: (payload: TopicMap[K]) => void) {
      assertOpen();
      return addListener(channels.channelFor(topic), listener as Listener, assertOpen);
    },
    onInterruption(listener: () => void): () => void {
      return backend.onInterruption?.(listener) ?? (() => undefined);
    },
    async ping(): Promise<void> {
      assertOpen();
      await backend.ping();
    },
    close(): Promise<void> {
      closing ??= (async () => {
        channels.clear();
        await backend.close();
      })();
      return closing;
    },
  };
}

/** The channels subscribed so far, one per topic, each opened on first use. */
function openChannels(backend: PubSubBackend, options: Options) {
  const channels = new Map<Topic, Channel>();
  return {
    channelFor(topic: Topic): Channel {
      const existing = channels.get(topic);
      if (existing) return existing;
      const channel: Channel = { listeners: new Set(), live: Promise.resolve() };
      const onMessage = (message: unknown) => dispatch(message, channel, { topic, kind: backend.kind, logger: options.logger });
      channel.live = backend.engine.subscribe(options.channelPrefix + topic, onMessage);
      // A failed SUBSCRIBE is forgotten, so the next subscriber tries again.
      channel.live.catch(() => {
        if (channels.get(topic) === channel) channels.delete(topic);
      });
      channels.set(topic, channel);
      return channel;
    },
    /** Drops every listener; the backend's close releases the channels themselves. */
    clear(): void {
      for (const channel of channels.values()) channel.listeners.clear();
      channels.clear();
    },
  };
}

/** Adds `listener` to `channel`; resolves to its remover once the channel is live. */
async function addListener(channel: Channel, listener: Listener, assertOpen: () => void): Promise<() => Promise<void>> {
  // A wrapper of its own, so the same function subscribed twice is two listeners.
  const entry: Listener = (payload) => listener(payload);
  // Added before the channel is live: a message arriving with the SUBSCRIBE reply is not lost.
  channel.listeners.add(entry);
  try {
    await channel.live;
    assertOpen();
  } catch (error) {
    channel.listeners.delete(entry);
    throw error;
  }
  return async () => {
    channel.listeners.delete(entry);
  };
}

/** Hands one message to every listener of its channel; a listener that throws is logged and skipped. */
function dispatch(message: unknown, channel: Channel, context: { topic: Topic; kind: PubSub['kind']; logger: Logger }) {
  const { topic, kind, logger } = context;
  const payload = decode(message);
  if (payload === undefined) {
    logger.warn({ topic, backend: kind }, 'pub/sub message dropped: not a JSON object');
    return;
  }
  // A snapshot, so a listener that unsubscribes (or subscribes) during delivery changes nothing now.
  for (const listener of [...channel.listeners]) {
    try {
      listener(payload);
    } catch (error) {
      logger.error({ err: error, topic }, 'pub/sub listener threw; the others still get the message');
    }
  }
}

/** The payload of a JSON-object message, or undefined for anything else. */
function decode(message: unknown): object | undefined {
  if (typeof message !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(message);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

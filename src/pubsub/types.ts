/** Every topic and the payload published on it. */
export interface TopicMap {
  /**
   * A replica committed notifications, the newest at log position (`txid`, `seq`), the log being
   * then settled through `settled`. A wake-up for every replica's notification feed, which reads what is
   * new from the store: published at most once per event-loop turn, and once per 10 ms while busy,
   * however many deliveries the commits held. Earlier releases sent `seq` alone.
   */
  notificationsStored: { seq: number; txid?: number; settled?: { txid: number; seq: number } };
}

export type Topic = keyof TopicMap;

/**
 * Publish/subscribe across every replica sharing the backend. Interchangeable backends (memory,
 * Redis) pass the same test suite.
 */
export interface PubSub {
  readonly kind: 'memory' | 'redis';
  publish<K extends Topic>(topic: K, payload: TopicMap[K]): Promise<void>;
  /**
   * Resolves once the subscription is live, so anything published after that reaches `listener`
   * (for Redis: once the server has acknowledged SUBSCRIBE). Resolves to the unsubscribe.
   */
  subscribe<K extends Topic>(topic: K, listener: (payload: TopicMap[K]) => void): Promise<() => Promise<void>>;
  /**
   * Calls `listener` whenever live delivery may have been interrupted, i.e. a message published
   * meanwhile may never arrive (Redis: the subscriber connection dropped); the notification feed then
   * reads the store at once. Memory never calls it. Returns the remover.
   */
  onInterruption(listener: () => void): () => void;
  /** Rejects when the backend cannot be reached; for readiness. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

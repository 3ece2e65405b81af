/** Every topic and the payload published on it. */
export interface TopicMap {
  /**
   * A replica committed notifications: a wake-up for every replica's notification feed, which then
   * reads what is new from its own store. It carries no position, so a message from anywhere (a
   * stale one, a forged one) costs at most a read. `replica` names the sender, so a replica can
   * skip its own messages. Published at most once per event-loop turn, once per interval while busy.
   */
  notificationsStored: { replica: string };
  /**
   * A replica recorded what the bank said of stored notifications (confirmed, mismatched, not at the
   * bank): a wake-up for every replica's confirmed feed, which then reads from its own store how far
   * the log is decided. Like `notificationsStored`, it carries no position, only the sender's name.
   */
  notificationsConfirmed: { replica: string };
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
  /**
   * Whether messages reach the other replicas now (Redis: both connections up). Not part of
   * readiness: without it live delivery is only later (the feed's timer reads the store), never lost.
   */
  readonly connected: boolean;
  close(): Promise<void>;
}

import type { Logger } from '../logger.ts';
import { createTopicListeners } from './listeners.ts';
import type { PubSub, Topic, TopicMap } from './types.ts';

/**
 * In-process pub/sub for a single replica (the embedded default). Messages still travel as JSON
 * text, so listeners get their own copy and behave exactly as they would over Redis. It never loses
 * a message, so it never reports an interruption.
 */
export function createMemoryPubSub({ logger }: { logger: Logger }): PubSub {
  const listeners = createTopicListeners<Topic>(logger, 'memory');
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error('memory pub/sub is closed');
  };
  return {
    kind: 'memory',
    async publish<K extends Topic>(topic: K, payload: TopicMap[K]) {
      assertOpen();
      listeners.dispatch(topic, JSON.stringify(payload));
    },
    async subscribe<K extends Topic>(topic: K, listener: (payload: TopicMap[K]) => void) {
      assertOpen();
      const remove = listeners.add(topic, listener as (payload: object) => void);
      return async () => remove();
    },
    onInterruption: () => () => undefined,
    get connected() {
      return !closed;
    },
    async close() {
      closed = true;
      listeners.clear();
    },
  };
}

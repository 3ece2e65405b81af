import { EventEmitter } from 'node:events';
import type { Logger } from '../logger.ts';
import { createTopicPubSub } from './topic-pub-sub.ts';
import type { PubSub } from './types.ts';

/**
 * In-process pub/sub for a single replica (the embedded default): one event per channel on a plain
 * EventEmitter. Messages still travel as JSON text, so listeners get their own copy and behave
 * exactly as they would over Redis.
 */
export function createMemoryPubSub(options: { logger: Logger; channelPrefix: string }): PubSub {
  const emitter = new EventEmitter();
  return createTopicPubSub(
    {
      kind: 'memory',
      engine: {
        publish: async (channel, message) => {
          emitter.emit(channel, message);
        },
        subscribe: async (channel, onMessage) => {
          emitter.on(channel, onMessage);
        },
      },
      ping: async () => {},
      close: async () => {
        emitter.removeAllListeners();
      },
    },
    options,
  );
}

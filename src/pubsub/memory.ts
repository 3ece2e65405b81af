import { EventEmitter } from 'node:events';
import { PubSub as GraphqlPubSub } from 'graphql-subscriptions';
import type { Logger } from '../logger.ts';
import { createTopicPubSub } from './topic-pub-sub.ts';
import type { PubSub } from './types.ts';

/**
 * In-process pub/sub for a single replica (the embedded default). Messages still travel as JSON
 * text, so listeners get their own copy and behave exactly as they would over Redis.
 */
export function createMemoryPubSub(options: { logger: Logger; channelPrefix: string }): PubSub {
  const emitter = new EventEmitter();
  const engine = new GraphqlPubSub<Record<string, string>>({ eventEmitter: emitter });
  return createTopicPubSub(
    {
      kind: 'memory',
      engine: {
        publish: (channel, message) => engine.publish(channel, message),
        subscribe: (channel, onMessage) => engine.subscribe(channel, onMessage),
      },
      ping: async () => {},
      close: async () => {
        emitter.removeAllListeners();
      },
    },
    options,
  );
}

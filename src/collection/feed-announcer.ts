// The publishing half of the log's followers: this replica's commits (and its confirmations), told to every replica.
import { randomUUID } from 'node:crypto';
import type { Link } from '@opentelemetry/api';
import type { Logger } from '../logger.ts';
import type { PubSub, TopicMap } from '../pubsub/types.ts';
import { linkToActiveSpan, tracePublish } from '../telemetry/webhook.ts';

/** Deliveries a publish span links to at most; one busy turn can hold thousands. */
const MAX_PUBLISH_LINKS = 128;

export interface Announcer {
  /** This replica's name in its messages, so it can skip its own when they come back. */
  readonly replica: string;
  /** A commit happened: every replica is woken by the next message, one message for many commits. */
  announce(): void;
  /** Resolves once every commit announced so far has gone out (or failed to). */
  flush(): Promise<void>;
}

/** The wake-up topics: each message names only its sender. */
export type WakeTopic = { [K in keyof TopicMap]: TopicMap[K] extends { replica: string } ? K : never }[keyof TopicMap];

/**
 * Announces commits as wake-ups on `topic` (`notificationsStored` unless given): the first after a
 * quiet spell on the next turn, and then at most one message per `intervalMs` while commits keep
 * coming, each carrying all the commits since the last. One message is published at a time; a lost
 * one only leaves the others to their safety-net timer.
 */
export function createAnnouncer(
  { pubsub, logger }: { pubsub: PubSub; logger: Logger },
  intervalMs: number,
  topic: WakeTopic = 'notificationsStored',
): Announcer {
  const replica = randomUUID();
  let links: Link[] = [];
  /** Something was announced that no message sent so far carries. */
  let unsent = false;
  let sending: Promise<void> | undefined;
  let lastSent = Number.NEGATIVE_INFINITY;

  async function send() {
    unsent = false;
    lastSent = performance.now();
    const linked = links;
    links = [];
    try {
      await tracePublish(pubsub.kind, topic, () => pubsub.publish(topic, { replica }), linked);
    } catch (error) {
      logger.error({ err: error, topic }, `${topic} could not be announced; other replicas will read the store on their next tick`);
    }
  }

  const schedule = () => {
    const wait = lastSent + intervalMs - performance.now();
    sending = new Promise<void>((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)))
      .then(send)
      .finally(() => (unsent ? schedule() : (sending = undefined)));
  };

  return {
    replica,
    announce() {
      const link = linkToActiveSpan();
      if (link && links.length < MAX_PUBLISH_LINKS) links.push(link);
      unsent = true;
      if (!sending) schedule();
    },
    async flush() {
      while (sending) await sending;
    },
  };
}

/**
 * The one place that knows the wire format of the frames we write ourselves: the `next` messages
 * of shared executions. graphql-ws's own serialiser builds each message; all this adds is that the
 * `id` comes first, so one serialised message serves every subscriber with only the id spliced in.
 * server/graphql-ws.contract.test.ts checks the bytes against graphql-ws's for the same message.
 */
import { MessageType, stringifyMessage, type FormattedExecutionResult } from 'graphql-ws';

const MARK = 'x';
const MARKED_PREFIX = `{"id":${JSON.stringify(MARK)}`;

/** A `next` message after its id: the same for every subscriber of one result. */
export type NextMessageTail = Buffer & { readonly __kind: 'next-message-tail' };

/** The part of each message on one subscription that is its own: `{"id":"<id>"`. */
export type MessagePrefix = Buffer & { readonly __kind: 'message-prefix' };

/** The prefix of every message of subscription `id`. */
export function messagePrefix(id: string): MessagePrefix {
  return Buffer.from(`{"id":${JSON.stringify(id)}`) as MessagePrefix;
}

/** A `next` message carrying `payload`, serialised once, short of its id. */
export function nextMessageTail(payload: FormattedExecutionResult): NextMessageTail {
  const message = stringifyMessage({ id: MARK, type: MessageType.Next, payload });
  // A graphql-ws that no longer writes the id first fails here, loudly, rather than on the wire.
  if (!message.startsWith(MARKED_PREFIX)) throw new Error('graphql-ws no longer serialises a message id first');
  return Buffer.from(message.slice(MARKED_PREFIX.length)) as NextMessageTail;
}

/** The whole message for one subscriber, as one text frame's bytes. */
export function nextMessage(prefix: MessagePrefix, tail: NextMessageTail): Buffer {
  return Buffer.concat([prefix, tail], prefix.length + tail.length);
}

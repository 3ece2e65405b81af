import type { Logger } from '../logger.ts';
import type { Topic } from './types.ts';

type Listener = (payload: unknown) => void;

/**
 * The local listeners of each topic, shared by both backends. A message reaches each listener as a
 * fresh object decoded from its JSON text (as over Redis), and a listener that throws is logged and
 * skipped: it never keeps a message from the others, nor fails the publisher.
 */
export function createListeners(logger: Logger, kind: string) {
  const byTopic = new Map<Topic, Set<Listener>>();
  return {
    /** Adds a listener (the same function twice is two listeners); returns its remover. */
    add(topic: Topic, listener: Listener): () => void {
      const entry: Listener = (payload) => listener(payload);
      let listeners = byTopic.get(topic);
      if (!listeners) byTopic.set(topic, (listeners = new Set()));
      listeners.add(entry);
      return () => void listeners.delete(entry);
    },
    /** Hands one message to every listener of `topic`, as they are now. */
    dispatch(topic: Topic, message: unknown): void {
      const listeners = byTopic.get(topic);
      if (!listeners || listeners.size === 0) return;
      const payload = decode(message);
      if (payload === undefined) return void logger.warn({ topic, backend: kind }, 'pub/sub message dropped: not a JSON object');
      // A snapshot, so a listener that unsubscribes (or subscribes) meanwhile changes nothing now.
      for (const listener of [...listeners]) {
        try {
          listener(payload);
        } catch (error) {
          logger.error({ err: error, topic }, 'pub/sub listener threw; the others still get the message');
        }
      }
    },
    clear: () => byTopic.clear(),
  };
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

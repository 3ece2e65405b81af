import type { Logger } from '../logger.ts';

/**
 * A set of local listeners, each handed every value; one that throws is logged and skipped, and
 * never keeps a value from the others nor fails whoever hands it out. The one registry behind
 * pub/sub's topics and the notification feed's subscribers.
 */
export class Listeners<T> {
  readonly #listeners = new Set<(value: T) => void>();
  readonly #logger: Logger;
  readonly #what: string;

  /** `what` names the values in the log line of a listener that threw. */
  constructor(logger: Logger, what: string) {
    this.#logger = logger;
    this.#what = what;
  }

  get size(): number {
    return this.#listeners.size;
  }

  /** Adds a listener (the same function twice is two listeners); returns its remover. */
  add(listener: (value: T) => void): () => void {
    const entry = (value: T) => listener(value);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  /** Hands `value` to every listener as they are now: one added or removed meanwhile changes nothing now. */
  handOut(value: T): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(value);
      } catch (error) {
        this.#logger.error({ err: error }, `a ${this.#what} listener threw; the others still got it`);
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}

/**
 * The local listeners of each topic, shared by both pub/sub backends. A message reaches each listener
 * as a fresh object decoded from its JSON text (as over Redis).
 */
export function createTopicListeners<Topic extends string>(logger: Logger, kind: string) {
  const byTopic = new Map<Topic, Listeners<object>>();
  return {
    /** Adds a listener of `topic`; returns its remover. */
    add(topic: Topic, listener: (payload: object) => void): () => void {
      let listeners = byTopic.get(topic);
      if (!listeners) byTopic.set(topic, (listeners = new Listeners(logger, `pub/sub ${topic}`)));
      return listeners.add(listener);
    },
    /** Hands one message to every listener of `topic`. */
    dispatch(topic: Topic, message: unknown): void {
      const listeners = byTopic.get(topic);
      if (!listeners || listeners.size === 0) return;
      const payload = decode(message);
      if (payload === undefined) return logger.warn({ topic, backend: kind }, 'pub/sub message dropped: not a JSON object');
      listeners.handOut(payload);
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

/**
 * What waits for one subscriber, and the one limit on it. A notification waits from the moment it is
 * read for a subscriber (a replay page) or handed to it (live) until its connection takes it; more
 * than SUBSCRIBER_WAITING_LIMIT waiting ends the subscriber (docs/http-api.md, "Slow subscribers").
 * Replay pages are read only when the subscriber has taken everything before them, so a connection
 * that stops reading stops the store reads too, and what waits for it grows only by what arrives live.
 */

import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';

/** Notifications one subscription may have waiting for its connection; one more ends it. */
export const SUBSCRIBER_WAITING_LIMIT = 1000;

/**
 * The connection a subscription's events are written to, when its transport has one of its own
 * (a WebSocket). Without one (the router's callback protocol) a subscriber too far behind completes.
 */
export interface SubscriberConnection {
  /** More than the limit waits for this subscription: close the connection, count it and log it once. */
  tooFarBehind(waiting: number): void;
  /**
   * Calls `end` when the connection is closed for falling behind, whichever of its subscriptions (or
   * its keep-alive) found it so: what waits for this one is dropped at once. Returns how to stop listening.
   */
  onClosedBehind(end: () => void): () => void;
}

/** Why a subscriber was ended, and what its client sees. */
export interface TooFarBehind {
  /** Notifications that were waiting for it, where known. */
  waiting?: number;
  /** It answered no keep-alive ping while frames were still on their way to it (bytes ws held). */
  unansweredPing?: { bufferedBytes: number };
  /** How it was ended: its subscription completed, its socket closed with 1013, or its socket cut (a client gone silent). */
  ending: 'completed' | 'closed with 1013' | 'cut';
}

/**
 * Counts one subscriber ended for falling too far behind (or silent at a keep-alive ping) and logs it once, as a warning: the line
 * the runbook names.
 */
export function reportTooFarBehind({ logger, metrics }: { logger: Logger; metrics: Metrics }, details: TooFarBehind): void {
  metrics.subscriptionsEndedEarly.inc();
  const reason = details.unansweredPing ? 'the subscriber stopped reading: it answered no ping' : 'the subscriber fell too far behind';
  logger.warn(
    { reason, ...details, limit: SUBSCRIBER_WAITING_LIMIT },
    'incomingTransfer subscription ended early; the client should resume with after',
  );
}

/** The gauge every waiting count adds to (graphql_subscription_notifications_waiting). */
export interface WaitingGauge {
  inc(value: number): void;
  dec(value: number): void;
}

/**
 * A count of what waits for one subscriber. Over the limit, it asks once the event-loop turn is
 * over: a burst handed out in one turn is taken within it by a connection that keeps up (its writes
 * complete on the same turn), so only a connection that did not take it is reported.
 */
export class WaitingCount {
  readonly #gauge: WaitingGauge;
  readonly #overLimit: (waiting: number) => void;
  #value = 0;
  #check: NodeJS.Immediate | undefined;

  constructor(gauge: WaitingGauge, overLimit: (waiting: number) => void) {
    this.#gauge = gauge;
    this.#overLimit = overLimit;
  }

  get value(): number {
    return this.#value;
  }

  add(count = 1): void {
    this.#value += count;
    this.#gauge.inc(count);
    if (this.#value > SUBSCRIBER_WAITING_LIMIT && !this.#check) {
      this.#check = setImmediate(() => {
        this.#check = undefined;
        if (this.#value > SUBSCRIBER_WAITING_LIMIT) this.#overLimit(this.#value);
      });
    }
  }

  remove(count = 1): void {
    this.#value -= count;
    this.#gauge.dec(count);
  }

  /** Nothing waits any more (the subscriber ended); no verdict is pending. */
  clear(): void {
    if (this.#value > 0) this.remove(this.#value);
    if (this.#check) clearImmediate(this.#check);
    this.#check = undefined;
  }
}

/** Where a taken item came from. */
export type Source = 'replay' | 'live';

export interface SubscriberQueueOptions<T> {
  gauge: WaitingGauge;
  /**
   * Runs on the first pull (a stream nobody iterates holds nothing): starts the live feed, which
   * calls `push`, and returns the replay's pages, oldest first, to be read one at a time on demand.
   */
  start(queue: SubscriberQueue<T>): AsyncIterator<T[]> | undefined;
  /** An item the consumer took. */
  onTaken(item: T, source: Source): void;
  /** More than the limit waited; the queue has ended (its consumer sees it complete). */
  onTooFarBehind(waiting: number): void;
  /** The queue ended (returned, too far behind, or its replay failed), after `start` ran. */
  onEnd(): void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * A subscriber's stream as graphql-js iterates it: the replay's items first (each page read when the
 * previous one has been taken), then live items in the order pushed. Live items pushed during the
 * replay wait behind it. Pulls are served one at a time, in order.
 */
export class SubscriberQueue<T> implements AsyncIterableIterator<T> {
  readonly #options: SubscriberQueueOptions<T>;
  readonly #waiting: WaitingCount;
  #state: 'idle' | 'open' | 'ended' = 'idle';
  #replay: AsyncIterator<T[]> | undefined;
  /** The replay page being taken, and how far: taken items are let go at once. */
  #page: (T | undefined)[] = [];
  #taken = 0;
  #live: T[] = [];
  #wake: (() => void) | undefined;
  #turn: Promise<unknown> = Promise.resolve();

  constructor(options: SubscriberQueueOptions<T>) {
    this.#options = options;
    this.#waiting = new WaitingCount(options.gauge, (waiting) => this.#tooFarBehind(waiting));
  }

  /** A live item; it waits behind the replay, if one is still running. */
  push(item: T): void {
    if (this.#state !== 'open') return;
    this.#live.push(item);
    this.#waiting.add();
    this.#wake?.();
  }

  next(): Promise<IteratorResult<T>> {
    const turn = this.#turn.then(() => this.#take());
    this.#turn = turn.catch(() => undefined);
    return turn;
  }

  async return(): Promise<IteratorResult<T>> {
    this.#end();
    return DONE;
  }

  async throw(error?: unknown): Promise<IteratorResult<T>> {
    this.#end();
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async #take(): Promise<IteratorResult<T>> {
    if (this.#state === 'idle') {
      this.#state = 'open';
      try {
        this.#replay = this.#options.start(this);
      } catch (error) {
        this.#end();
        throw error;
      }
    }
    for (;;) {
      if (this.#state === 'ended') return DONE;
      if (this.#taken < this.#page.length) {
        const item = this.#page[this.#taken]!;
        this.#page[this.#taken++] = undefined;
        return this.#took(item, 'replay');
      }
      if (this.#replay) {
        await this.#readPage(this.#replay);
        continue;
      }
      const live = this.#live.shift();
      if (live !== undefined) return this.#took(live, 'live');
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  async #readPage(replay: AsyncIterator<T[]>): Promise<void> {
    let page: IteratorResult<T[]>;
    try {
      page = await replay.next();
    } catch (error) {
      this.#end();
      throw error;
    }
    if (this.#state === 'ended') return;
    if (page.done) {
      this.#replay = undefined;
      return;
    }
    this.#page = [...page.value];
    this.#taken = 0;
    this.#waiting.add(page.value.length);
  }

  #took(item: T, source: Source): IteratorResult<T> {
    this.#waiting.remove();
    this.#options.onTaken(item, source);
    return { done: false, value: item };
  }

  #tooFarBehind(waiting: number): void {
    if (this.#state !== 'open') return;
    this.#end();
    this.#options.onTooFarBehind(waiting);
  }

  #end(): void {
    const started = this.#state === 'open';
    this.#state = 'ended';
    this.#page = [];
    this.#live = [];
    this.#waiting.clear();
    this.#wake?.();
    // A page read in flight finishes on its own; the generator then stops at its next step.
    this.#replay?.return?.().catch(() => undefined);
    this.#replay = undefined;
    if (started) this.#options.onEnd();
  }
}

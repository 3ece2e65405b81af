/**
 * Waiting in tests: on an event wherever there is one (`Inbox`, `expire`, `nextTurn`); by polling
 * (`waitFor`) only for a condition nothing announces, such as a gauge on /metrics or a port closing.
 */
import { inspect } from 'node:util';
import { withinDeadline } from '../../src/async/deadline.ts';

/**
 * Polls `check` until it returns something other than undefined (or stops throwing), or fails
 * after `expireMs` with the last error. For conditions with no event to wait on (a port closing).
 * It looks again at once, then less and less often (at most every 25 ms).
 */
export async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, expireMs = 5_000): Promise<T> {
  const deadline = Date.now() + expireMs;
  let lastError: unknown;
  for (let pause = 1; ; pause = Math.min(pause * 2, 25)) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`waitFor expired after ${expireMs} ms${lastError ? `: ${inspect(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

const LATE = Symbol('late');

/** `promise`, or a failure naming `what` if `expireMs` pass first: a deadline on an event, never a sleep. */
export async function expire<T>(promise: Promise<T>, what: string, expireMs = 5_000): Promise<T> {
  const settled = await withinDeadline(promise, expireMs, LATE);
  if (settled === LATE) throw new Error(`${what}: nothing within ${expireMs} ms`);
  return settled;
}

/** Resolves after the current turn of the event loop: whatever was queued with setImmediate before has run. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * An array of what arrived (events, messages, log lines) that wakes its waiters on each push:
 * `until(done)` resolves at the arrival that makes `done` true. Used as a plain array otherwise.
 */
export class Inbox<T> extends Array<T> {
  // map, filter and slice make plain arrays.
  static override get [Symbol.species]() {
    return Array;
  }

  #waiters = new Set<() => void>();

  override push(...items: T[]): number {
    const length = super.push(...items);
    for (const wake of [...this.#waiters]) wake();
    return length;
  }

  /** Resolves with the items once `done(items)` holds (checked now and at every push); fails after `expireMs`. */
  until(done: (items: readonly T[]) => boolean, expireMs = 5_000): Promise<readonly T[]> {
    if (done(this)) return Promise.resolve(this);
    const arrived = Promise.withResolvers<readonly T[]>();
    const wake = () => {
      if (done(this)) arrived.resolve(this);
    };
    this.#waiters.add(wake);
    return expire(arrived.promise, `waiting on ${this.length} arrivals`, expireMs).finally(() => this.#waiters.delete(wake));
  }

  /** Resolves once at least `count` items have arrived. */
  atLeast(count: number, expireMs?: number): Promise<readonly T[]> {
    return this.until((items) => items.length >= count, expireMs);
  }

  /** Resolves with the first item that matches, already here or yet to come. */
  async first(match: (item: T) => boolean, expireMs?: number): Promise<T> {
    const items = await this.until((arrived) => arrived.some(match), expireMs);
    return items.find(match)!;
  }
}

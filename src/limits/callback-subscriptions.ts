/**
 * How many subscriptions the router's callback protocol may hold: each is a stream of ours and a
 * timer of requests to an address a caller chose, so one caller cannot take a replica's share, and a
 * replica cannot be made to hold more than it can serve. A place is taken before any request goes
 * out and given back when the subscription ends, however it ends.
 */
import { accessKey, type Caller } from '../auth/caller.ts';
import { badUserInput } from '../errors.ts';
import type { GraphQLError } from 'graphql';

/** The most callback subscriptions one caller may hold at once, on one replica. */
export const MAX_CALLBACK_SUBSCRIPTIONS_PER_CALLER = 100;
/** The most callback subscriptions one replica holds at once, every caller together. */
export const MAX_CALLBACK_SUBSCRIPTIONS = 10_000;

/** One subscription's place among the callback protocol's. */
export interface CallbackPlace {
  /** `stream` as served: the place is given back when it ends (done, failed or returned). */
  hold<T>(stream: AsyncIterableIterator<T>): AsyncIterableIterator<T>;
  /** Whether a stream holds the place (else it is given back as soon as the subscription's start is over). */
  readonly holding: boolean;
  /** Gives the place back; once, however often it is called. */
  release(): void;
}

export interface CallbackSubscriptionLimits {
  /** A place for one more subscription of `caller`, or why there is none (nothing may be sent). */
  admit(caller: Caller): CallbackPlace | GraphQLError;
}

/**
 * Who counts as one caller: the token's `sub`; a token without one counts with every token that
 * grants exactly the same (scopes and accounts). With authorization off (the in-process sandbox
 * outside production) every caller is one.
 */
export function callbackCallerOf(caller: Caller): string {
  if (caller.kind === 'verified' && caller.subject !== undefined) return `sub:${caller.subject}`;
  return `grants:${accessKey(caller)}`;
}

/** The limits of one replica; `onCount` is told the number held after every change (a gauge). */
export function createCallbackSubscriptionLimits(onCount: (held: number) => void): CallbackSubscriptionLimits {
  const byCaller = new Map<string, number>();
  let held = 0;
  return {
    admit(caller) {
      const key = callbackCallerOf(caller);
      const mine = byCaller.get(key) ?? 0;
      if (mine >= MAX_CALLBACK_SUBSCRIPTIONS_PER_CALLER) {
        return badUserInput(
          'subscription',
          `this caller already holds ${MAX_CALLBACK_SUBSCRIPTIONS_PER_CALLER} callback subscriptions, the most one caller may: let one end, or subscribe over WebSocket. Nothing was sent to the callback URL.`,
        );
      }
      if (held >= MAX_CALLBACK_SUBSCRIPTIONS) {
        return badUserInput(
          'subscription',
          `this replica already holds ${MAX_CALLBACK_SUBSCRIPTIONS} callback subscriptions, the most it serves: try again shortly, or subscribe over WebSocket. Nothing was sent to the callback URL.`,
        );
      }
      byCaller.set(key, mine + 1);
      onCount((held += 1));
      let released = false;
      let holding = false;
      const release = () => {
        if (released) return;
        released = true;
        const left = (byCaller.get(key) ?? 1) - 1;
        if (left === 0) byCaller.delete(key);
        else byCaller.set(key, left);
        onCount((held -= 1));
      };
      return {
        get holding() {
          return holding;
        },
        release,
        hold(stream) {
          holding = true;
          return releasingAtEnd(stream, release);
        },
      };
    },
  };
}

/** `stream`, calling `end` once it is done, fails, or is returned. */
function releasingAtEnd<T>(stream: AsyncIterableIterator<T>, end: () => void): AsyncIterableIterator<T> {
  const done = { done: true, value: undefined } as const;
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      try {
        const step = await stream.next();
        if (step.done) end();
        return step;
      } catch (error) {
        end();
        throw error;
      }
    },
    async return(value?: unknown) {
      end();
      return (await stream.return?.(value)) ?? done;
    },
    async throw(reason?: unknown) {
      end();
      return (await stream.throw?.(reason)) ?? done;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

// Ending what a token opened when the token ends: at its deadline (a timer), or when the key that
// signed it leaves the issuer's JWKS (the key set's watch), whichever comes first.
import type { TokenLifetime } from './caller.ts';

/** setTimeout's longest delay; a token may live longer, so the timer is armed again until then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Why a token ended, as the refusal it now meets (`graphql_authorization_refusals_total{reason}`). */
export type TokenEnd = 'expired' | 'unknown_key';

/** What a client is told of why its token ended: enough to act on, nothing of the token. */
export const TOKEN_END_PROBLEMS = {
  expired: 'the token expired',
  unknown_key: "the key that signed the token was withdrawn from the issuer's JWKS",
} as const satisfies Record<TokenEnd, string>;

/** Calls `fire` once at `deadline` (epoch ms; at once when past); returns how to cancel it. */
export function atDeadline(deadline: number, fire: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = deadline - Date.now();
    if (left <= 0) return fire();
    timer = setTimeout(arm, Math.min(left, LONGEST_TIMER_MS));
    // A subscription's timer must not keep a process alive that is otherwise done.
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}

/**
 * Calls `end` once, when the token of `lifetime` ends: `expired` at its deadline, `unknown_key` when
 * its key is withdrawn first (at once when either is already so); returns how to cancel it.
 */
export function whenTokenEnds(lifetime: TokenLifetime, end: (why: TokenEnd) => void): () => void {
  let ended = false;
  const stops: (() => void)[] = [];
  const cancel = () => {
    ended = true;
    for (const stop of stops.splice(0)) stop();
  };
  const once = (why: TokenEnd) => {
    if (ended) return;
    cancel();
    end(why);
  };
  stops.push(lifetime.onKeyWithdrawn(() => once('unknown_key')));
  if (!ended) stops.push(atDeadline(lifetime.acceptedUntil, () => once('expired')));
  if (ended) cancel();
  return cancel;
}

/**
 * `source` until its token ends: then it is ended (return()) and the next step rejects with
 * `error(why)`, which the transport reports (the callback protocol's `complete` with that error).
 */
export function endingWithToken<T>(
  source: AsyncIterableIterator<T>,
  lifetime: TokenLifetime,
  error: (why: TokenEnd) => Error,
): AsyncIterableIterator<T> {
  const ended = Promise.withResolvers<never>();
  // Observed here: until the transport asks for the next step, nobody else awaits it.
  ended.promise.catch(() => undefined);
  const cancel = whenTokenEnds(lifetime, (why) => {
    ended.reject(error(why));
    void source.return?.();
  });
  const done = { done: true, value: undefined } as const;
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      const step = await Promise.race([source.next(), ended.promise]);
      if (step.done) cancel();
      return step;
    },
    async return(value?: unknown) {
      cancel();
      return (await source.return?.(value)) ?? done;
    },
    async throw(reason?: unknown) {
      cancel();
      return (await source.throw?.(reason)) ?? done;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

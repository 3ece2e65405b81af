// Ending what a token opened when the token expires: a timer per connection or stream.

/** setTimeout's longest delay; a token may live longer, so the timer is armed again until then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

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
 * `source` until `deadline`: then it is ended (return()) and the next step rejects with `error()`,
 * which the transport reports (the callback protocol's `complete` with that error).
 */
export function endingAt<T>(source: AsyncIterableIterator<T>, deadline: number, error: () => Error): AsyncIterableIterator<T> {
  const expired = Promise.withResolvers<never>();
  // Observed here: until the transport asks for the next step, nobody else awaits it.
  expired.promise.catch(() => undefined);
  const cancel = atDeadline(deadline, () => {
    expired.reject(error());
    void source.return?.();
  });
  const ended = { done: true, value: undefined } as const;
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      const step = await Promise.race([source.next(), expired.promise]);
      if (step.done) cancel();
      return step;
    },
    async return(value?: unknown) {
      cancel();
      return (await source.return?.(value)) ?? ended;
    },
    async throw(reason?: unknown) {
      cancel();
      return (await source.throw?.(reason)) ?? ended;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

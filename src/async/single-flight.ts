// Single-flight: while a call is pending, later callers get its promise instead of starting another.
// Nothing outlives the flight: once it settles it is forgotten, so a failure reaches only those who
// waited on it and the next caller starts afresh. Imports nothing of ours: every floor may use it.

export interface SingleFlight<K = string> {
  /** `start()`'s promise, or the one already pending under `key` (then `onJoin` is told). */
  share<T>(key: K, start: () => Promise<T>): Promise<T>;
}

/** A single-flight map of keys to pending calls; `onJoin` is told of every caller that joined one. */
export function createSingleFlight<K = string>(onJoin?: () => void): SingleFlight<K> {
  const pending = new Map<K, Promise<unknown>>();
  return {
    share<T>(key: K, start: () => Promise<T>): Promise<T> {
      const existing = pending.get(key);
      if (existing !== undefined) {
        onJoin?.();
        return existing as Promise<T>;
      }
      const call = start().finally(() => pending.delete(key));
      pending.set(key, call);
      return call;
    },
  };
}

/** `start` made single-flight: a call while one is pending gets that one's promise. */
export function singleFlight<T>(start: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => (pending ??= start().finally(() => (pending = undefined)));
}

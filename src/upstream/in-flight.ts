/**
 * Identical reads in flight share one bank call: while a call for a key is pending, later callers
 * get the same promise. Nothing outlives the flight: once it settles the key is forgotten, so a
 * failure reaches only those who waited on it and the next caller starts afresh.
 */

export interface InFlight {
  /** `start()`'s promise, or the one already pending under `key` (then `onJoin` is told). */
  share<T>(key: string, start: () => Promise<T>): Promise<T>;
}

/** A single-flight map; `onJoin` is told of every caller that joined a pending call. */
export function createInFlight(onJoin?: () => void): InFlight {
  const pending = new Map<string, Promise<unknown>>();
  return {
    share<T>(key: string, start: () => Promise<T>): Promise<T> {
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

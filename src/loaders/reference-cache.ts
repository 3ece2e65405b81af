/**
 * A process-wide cache of one list the bank serves to everyone alike (the bank list, the bill
 * categories): fresh for `BANK_LIST_TTL_S`, at most one refresh in flight, and stale-if-error: when
 * a refresh finds the bank unavailable or garbled, the last good copy answers for up to
 * `BANK_LIST_STALE_S` past its freshness. Never for personal data: those reads are not cached.
 *
 * lru-cache's `fetchMethod` does the TTL, the one refresh in flight (later callers join it) and the
 * stale answer (`allowStaleOnFetchRejection`). It has no bound on how stale, and serves stale on
 * any rejection, so the fetch decides per failure, through the option lru-cache documents as
 * settable there. Nothing aborts a refresh here (one key, never set by hand, never evicted), so
 * `allowStaleOnFetchAbort` has nothing to do.
 */
import { LRUCache } from 'lru-cache';
import { ErrorCode, UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';

/** Which list, as `bank_list_refreshes_total{list}` and the log name it. */
export type ReferenceList = 'banks' | 'billCategories';

export interface ReferenceCache<T> {
  /** The copy while fresh; otherwise one refresh shared by every caller, or the error it met. */
  get(): Promise<ReferenceCopy<T>>;
}

/** A copy of a list, and when it came from the bank: what its answers may be cached for downstream. */
export interface ReferenceCopy<T> {
  readonly value: T;
  /** performance.now() when the bank sent it. */
  readonly fetchedAt: number;
}

export interface ReferenceCacheOptions<T> {
  list: ReferenceList;
  /** One fetch of the list from the bank; throws an `UpstreamError` when it fails. */
  load: () => Promise<T>;
  /** How long a copy is fresh (`BANK_LIST_TTL_S`); 0 refreshes on every `get`. */
  freshMs: number;
  /** How long past freshness a copy may still answer a failed refresh (`BANK_LIST_STALE_S`); 0: never. */
  staleMs: number;
  logger: Logger;
  metrics: Pick<Metrics, 'bankListRefreshes'>;
}

/** The bank down or answering garbage: worth the old copy. A refusal of our credentials is not. */
const STALE_ON: ReadonlySet<string> = new Set([ErrorCode.UPSTREAM_UNAVAILABLE, ErrorCode.UPSTREAM_INVALID_RESPONSE]);

const KEY = 'list';

/** Creates the cache of one list, counting each refresh by outcome (ok, stale, error). */
export function createReferenceCache<T>(options: ReferenceCacheOptions<T>): ReferenceCache<T> {
  const { list, load, freshMs, staleMs, logger, metrics } = options;
  /** What the copy may answer `error` with: its age and the failure's code; undefined when the error stands. */
  const staleAnswer = (stale: ReferenceCopy<T> | undefined, error: unknown) => {
    if (stale === undefined || staleMs === 0) return undefined;
    if (!(error instanceof UpstreamError) || !STALE_ON.has(error.code)) return undefined;
    const ageMs = performance.now() - stale.fetchedAt;
    return ageMs <= freshMs + staleMs ? { ageMs, code: error.code } : undefined;
  };
  // The last failure, for the one case lru-cache swallows it (see get()).
  let lastFailure: unknown;
  const cache = new LRUCache<typeof KEY, ReferenceCopy<T>>({
    max: 1,
    // lru-cache reads a ttl of 0 as "never expires": that case refreshes by force in get() instead.
    ttl: freshMs,
    // A failed refresh keeps the copy, served or not: a later failure within the window may serve it.
    noDeleteOnFetchRejection: true,
    fetchMethod: async (_key, stale, { options: fetchOptions }) => {
      try {
        const value = await load();
        metrics.bankListRefreshes.inc({ list, outcome: 'ok' });
        return { value, fetchedAt: performance.now() };
      } catch (error) {
        const answer = staleAnswer(stale, error);
        // Read by lru-cache once this rejection lands: the stale copy answers, or the error stands.
        fetchOptions.allowStaleOnFetchRejection = answer !== undefined;
        metrics.bankListRefreshes.inc({ list, outcome: answer === undefined ? 'error' : 'stale' });
        if (answer !== undefined) {
          const line = { list, code: answer.code, ageS: Math.round(answer.ageMs / 1000) };
          logger.warn(line, 'reference list refresh failed: serving the last good copy');
        }
        lastFailure = error;
        throw error;
      }
    },
  });

  return {
    async get() {
      const copy = await cache.fetch(KEY, { forceRefresh: freshMs === 0 });
      // lru-cache resolves a failed fetch with nothing to serve as undefined when stale answers are
      // allowed; they are not then, so this only guards that its error still stands if that changes.
      if (copy === undefined) throw lastFailure;
      return copy;
    },
  };
}

import { LRUCache } from 'lru-cache';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { createMetrics } from '../metrics.ts';
import { createReferenceCache } from './reference-cache.ts';

const unavailable = () => new UpstreamError('UPSTREAM_UNAVAILABLE', { area: 'account', operation: 'listBanks' });

/** A cache over a load that answers from `answers` in turn (an Error is thrown), counting loads. */
function cacheOver(answers: (string | Error)[], { freshMs = 60_000, staleMs = 60_000 } = {}) {
  const metrics = createMetrics();
  let loads = 0;
  const gate = { open: Promise.resolve() };
  const cache = createReferenceCache({
    list: 'banks',
    freshMs,
    staleMs,
    logger: createLogger('silent'),
    metrics,
    load: async () => {
      const answer = answers[loads++];
      await gate.open;
      if (answer instanceof Error) throw answer;
      return answer!;
    },
  });
  const refreshes = async (outcome: string) =>
    (await metrics.bankListRefreshes.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  // What callers read: the copy's value.
  const read = async () => (await cache.get()).value;
  return { cache: { get: read }, copies: cache, loads: () => loads, gate, refreshes };
}

describe('createReferenceCache', () => {
  it('answers from the copy while it is fresh', async () => {
    const { cache, loads } = cacheOver(['v1', 'v2']);
    expect(await cache.get()).toBe('v1');
    expect(await cache.get()).toBe('v1');
    expect(loads()).toBe(1);
  });

  it('has one refresh in flight, which every caller shares, even when it refreshes on every get', async () => {
    const { cache, loads, gate } = cacheOver(['v1', 'v2'], { freshMs: 0 });
    const held = Promise.withResolvers<void>();
    gate.open = held.promise;
    const waiting = Array.from({ length: 5 }, () => cache.get());
    held.resolve();
    expect(await Promise.all(waiting)).toEqual(['v1', 'v1', 'v1', 'v1', 'v1']);
    expect(loads()).toBe(1);
    expect(await cache.get()).toBe('v2');
  });

  it("rejects with the load's own error when there is no copy yet", async () => {
    const failure = unavailable();
    const { cache, refreshes } = cacheOver([failure, 'v1']);
    await expect(cache.get()).rejects.toBe(failure);
    expect(await refreshes('error')).toBe(1);
    // Nothing is kept of a failure: the next get tries again.
    expect(await cache.get()).toBe('v1');
  });

  it('serves the copy when a refresh fails as unavailable, and every caller waiting on it gets the copy', async () => {
    const { cache, gate, refreshes } = cacheOver(['v1', unavailable()], { freshMs: 0 });
    expect(await cache.get()).toBe('v1');
    const held = Promise.withResolvers<void>();
    gate.open = held.promise;
    const waiting = [cache.get(), cache.get()];
    held.resolve();
    expect(await Promise.all(waiting)).toEqual(['v1', 'v1']);
    expect(await refreshes('stale')).toBe(1);
  });

  it('dates each copy by its arrival from the bank, so a stale copy keeps its own date', async () => {
    const { copies } = cacheOver(['v1', unavailable(), 'v2'], { freshMs: 0 });
    const before = performance.now();
    const first = await copies.get();
    expect(first.fetchedAt).toBeGreaterThanOrEqual(before);
    const stale = await copies.get();
    expect(stale).toEqual(first);
    const next = await copies.get();
    expect(next.value).toBe('v2');
    expect(next.fetchedAt).toBeGreaterThan(first.fetchedAt);
  });

  it('lets any other failure stand, a plain Error included', async () => {
    const failure = new Error('a bug in a reader');
    const { cache } = cacheOver(['v1', failure], { freshMs: 0 });
    expect(await cache.get()).toBe('v1');
    await expect(cache.get()).rejects.toBe(failure);
  });
});

// What the cache relies on in lru-cache, pinned: a rejection's stale answer is decided by the
// option as the fetch method leaves it, and with nothing cached a rejection allowed to answer
// stale resolves undefined (the gotcha the cache guards against).
describe('lru-cache, as reference-cache.ts uses it', () => {
  const failing = (allowStale: boolean) =>
    new LRUCache<string, string>({
      max: 1,
      noDeleteOnFetchRejection: true,
      fetchMethod: async (_key, _stale, { options }) => {
        options.allowStaleOnFetchRejection = allowStale;
        throw new Error('refresh failed');
      },
    });

  it('serves the stale copy on a rejection when the fetch method allows it, and rethrows when it does not', async () => {
    for (const allow of [true, false]) {
      const cache = failing(allow);
      cache.set('key', 'old');
      const fetched = cache.fetch('key', { forceRefresh: true });
      if (allow) await expect(fetched).resolves.toBe('old');
      else await expect(fetched).rejects.toThrow('refresh failed');
      // Kept either way (noDeleteOnFetchRejection).
      expect(cache.peek('key', { allowStale: true })).toBe('old');
    }
  });

  it('resolves undefined, not the error, when a rejection may answer stale but nothing is cached', async () => {
    await expect(failing(true).fetch('key')).resolves.toBeUndefined();
  });
});

import type { BankRecord } from '../domain/index.ts';

/** The bank list with an index by code. */
export interface BankDirectory {
  banks: readonly BankRecord[];
  byCode: ReadonlyMap<string, BankRecord>;
}

export interface BankListCache {
  /** The cached list while fresh; otherwise one fetch, shared by every caller waiting for it. */
  get(): Promise<BankDirectory>;
}

/**
 * A process-wide cache of the bank list (op 2), fresh for `ttlMs`. At most one fetch is in flight:
 * callers arriving during a refresh share it. A failed fetch caches nothing, so the next caller
 * tries again.
 */
export function createBankListCache(
  fetchBanks: () => Promise<BankRecord[]>,
  options: { ttlMs: number; now?: () => number; onFetch?: (outcome: 'ok' | 'error') => void },
): BankListCache {
  const now = options.now ?? Date.now;
  let cached: { directory: BankDirectory; expiresAt: number } | undefined;
  let inFlight: Promise<BankDirectory> | undefined;

  async function refresh(): Promise<BankDirectory> {
    try {
      const banks = await fetchBanks();
      const directory: BankDirectory = { banks, byCode: new Map(banks.map((bank) => [bank.code, bank])) };
      cached = { directory, expiresAt: now() + options.ttlMs };
      options.onFetch?.('ok');
      return directory;
    } catch (error) {
      options.onFetch?.('error');
      throw error;
    }
  }

  return {
    get() {
      if (cached && now() < cached.expiresAt) return Promise.resolve(cached.directory);
      inFlight ??= refresh().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
  };
}

/**
 * The lists the bank serves to everyone alike, each cached process-wide (reference-cache.ts): the
 * bank list, indexed by code, and the bill categories. Personal reads are never among them.
 */
import type { BankRecord, BillCategoryRecord } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { BankClients } from '../upstream/types.ts';
import { createReferenceCache, type ReferenceCache } from './reference-cache.ts';

/** The bank list with an index by code. */
export interface BankDirectory {
  banks: readonly BankRecord[];
  byCode: ReadonlyMap<string, BankRecord>;
}

export interface ReferenceData {
  bankList: ReferenceCache<BankDirectory>;
  billCategories: ReferenceCache<BillCategoryRecord[]>;
}

export interface ReferenceDataOptions {
  /** `BANK_LIST_TTL_S`, for both lists. */
  freshMs: number;
  /** `BANK_LIST_STALE_S`, for both lists. */
  staleMs: number;
  logger: Logger;
  metrics: Pick<Metrics, 'bankListRefreshes'>;
}

/** Both lists' caches over `bank` (the unbudgeted clients: a refresh serves every request alike). */
export function createReferenceData(bank: BankClients, options: ReferenceDataOptions): ReferenceData {
  return {
    bankList: createReferenceCache({
      ...options,
      list: 'banks',
      load: async () => {
        const banks = await bank.account.listBanks();
        return { banks, byCode: new Map(banks.map((entry) => [entry.code, entry])) };
      },
    }),
    billCategories: createReferenceCache({ ...options, list: 'billCategories', load: () => bank.billing.listCategories() }),
  };
}

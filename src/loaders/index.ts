import DataLoader from 'dataloader';
import type { AccountRecord, BankRecord, BillCategoryRecord, BillRecord, CollectionNotificationRecord } from '../domain/index.ts';
import type { NotificationStore } from '../store/types.ts';
import type { BankClients } from '../upstream/types.ts';
import type { ReferenceCopy } from './reference-cache.ts';
import type { BankDirectory, ReferenceData } from './reference-data.ts';

/** Per-request loaders: each batches and deduplicates within one GraphQL request only. */
export interface Loaders {
  /** The bank list, from its process-wide cache (one refresh in flight for every request). */
  bankDirectory(): Promise<BankDirectory>;
  bankLoader: DataLoader<string, BankRecord | null>;
  accountLoader: DataLoader<{ accountNumber: string; bankCode: string }, AccountRecord, string>;
  /** The bill categories, from their process-wide cache (the bank has no read of one category). */
  billCategories(): Promise<BillCategoryRecord[]>;
  billsLoader: DataLoader<number, BillRecord[]>;
  notificationLoader: DataLoader<string, CollectionNotificationRecord | null>;
  /**
   * performance.now() when the oldest copy of a reference list this request read came from the
   * bank; undefined when it read none. An answer built on it is fresh no longer than that copy.
   */
  oldestReferenceCopy(): number | undefined;
}

/** Builds a request's loaders over the process-wide reference data, the clients and the store. */
export function createLoaders(deps: { bank: BankClients; referenceData: ReferenceData; store: NotificationStore }): Loaders {
  // The caches keep one refresh in flight and answer a fresh copy at once: nothing to share here.
  let oldestCopy: number | undefined;
  const valueOf = <T>(copy: ReferenceCopy<T>): T => {
    oldestCopy = Math.min(oldestCopy ?? copy.fetchedAt, copy.fetchedAt);
    return copy.value;
  };
  const bankDirectory = async () => valueOf(await deps.referenceData.bankList.get());
  const billCategories = async () => valueOf(await deps.referenceData.billCategories.get());

  // Each DataLoader is made on first use: most operations need one of them, many none.
  let bankLoader: Loaders['bankLoader'] | undefined;
  let accountLoader: Loaders['accountLoader'] | undefined;
  let billsLoader: Loaders['billsLoader'] | undefined;
  let notificationLoader: Loaders['notificationLoader'] | undefined;
  return {
    bankDirectory,
    get bankLoader() {
      return (bankLoader ??= new DataLoader(async (codes) => {
        const { byCode } = await bankDirectory();
        return codes.map((code) => byCode.get(code) ?? null);
      }));
    },
    // The bank has no batch name enquiry: one call per distinct account, run together.
    get accountLoader() {
      return (accountLoader ??= new DataLoader(
        (keys) => Promise.all(keys.map((key) => deps.bank.account.lookupAccount(key).catch((error: unknown) => toError(error)))),
        { cacheKeyFn: ({ accountNumber, bankCode }) => `${accountNumber}:${bankCode}` },
      ));
    },
    billCategories,
    get billsLoader() {
      return (billsLoader ??= new DataLoader((ids) =>
        Promise.all(ids.map((id) => deps.bank.billing.listBills(id).catch((error: unknown) => toError(error)))),
      ));
    },
    get notificationLoader() {
      return (notificationLoader ??= new DataLoader((settlementIds) => deps.store.getMany(settlementIds)));
    },
    oldestReferenceCopy: () => oldestCopy,
  };
}

// DataLoader rejects only the keys whose slot holds an Error, so each key keeps its own failure.
function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

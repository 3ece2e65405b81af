import type { QueryResolvers } from '../__generated__/resolvers-types.ts';
import { decodeCursor, decodeQuarantineCursor } from '../collection/cursor.ts';
import * as valid from '../validation.ts';

/** Page size of `collectionNotifications` when `first` is not given, and its ceiling. */
const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;
/** The longest [from, to) a summary or a page takes: a year, leap day included, so no query scans the whole history. */
const MAX_RANGE_DAYS = 366;

export const Query: QueryResolvers = {
  account: (_, args, { bank, loaders }) => {
    const accountNumber = valid.accountNumber(args.accountNumber);
    if (args.bankCode === null || args.bankCode === undefined) return bank.account.lookupAccount({ accountNumber });
    return loaders.accountLoader.load({ accountNumber, bankCode: valid.bankCode(args.bankCode) });
  },
  banks: async (_, __, { loaders }) => [...(await loaders.bankDirectory()).banks],
  bank: (_, { code }, { loaders }) => loaders.bankLoader.load(valid.bankCode(code, 'code')),
  bvn: (_, { number }, { bank }) => bank.account.lookupBvn(valid.bvn(number)),
  postingAccount: (_, args, { bank }) =>
    bank.posting.lookupAccount({
      accountNumber: valid.accountNumber(args.accountNumber),
      beneficiaryBank: valid.bankCode(args.beneficiaryBank, 'beneficiaryBank'),
    }),

  billCategories: (_, __, { loaders }) => loaders.billCategories(),
  billCategory: async (_, { id }, { loaders }) => (await loaders.billCategories()).find((c) => c.id === id) ?? null,
  bills: (_, { categoryId }, { loaders }) => loaders.billsLoader.load(valid.categoryId(categoryId)),

  collectionNotification: (_, { settlementId }, { loaders }) => loaders.notificationLoader.load(valid.settlementId(settlementId)),
  collectionNotifications: async (_, args, { store }) => {
    const limit = valid.pageSize(args.first, DEFAULT_PAGE, MAX_PAGE);
    const accountNumber = args.accountNumber == null ? undefined : valid.accountNumber(args.accountNumber);
    const before = args.after == null ? undefined : decodeCursor(args.after);
    const range = valid.pageRange(args.from, args.to, MAX_RANGE_DAYS);
    const confirmation = args.confirmation ?? undefined;
    // One extra row tells whether another page follows.
    const rows = await store.listNewestFirst({ accountNumber, before, ...range, confirmation, limit: limit + 1 });
    return { notifications: rows.slice(0, limit), hasNextPage: rows.length > limit };
  },
  quarantinedDeliveries: async (_, args, { quarantine }) => {
    const limit = valid.pageSize(args.first, DEFAULT_PAGE, MAX_PAGE);
    const before = args.after == null ? undefined : decodeQuarantineCursor(args.after);
    const { from, to } = valid.openRange(args.from, args.to);
    const rows = await quarantine.list({
      before,
      limit: limit + 1,
      kind: args.kind ?? undefined,
      reviewed: args.reviewed ?? undefined,
      from,
      to,
    });
    return { deliveries: rows.slice(0, limit), hasNextPage: rows.length > limit };
  },
  bankTransaction: (_, args, { reconciliation }) => reconciliation.check(valid.transferId(args)),
  collectionSummary: (_, args, { store, bankTimezone }) => {
    const accountNumber = args.accountNumber == null ? undefined : valid.accountNumber(args.accountNumber);
    const range = valid.timeRange(args.from, args.to, MAX_RANGE_DAYS);
    return store.summarize({ accountNumber, ...range, confirmed: args.confirmed === true, timezone: bankTimezone });
  },
};

import type { AccountResolvers } from '../__generated__/resolvers-types.ts';
import * as valid from '../validation.ts';

export const Account: AccountResolvers = {
  // The key is exactly what a name enquiry (op 1) needs, so references resolve upstream.
  __resolveReference: (reference, { loaders }) =>
    loaders.accountLoader.load({
      accountNumber: valid.accountNumber(reference.accountNumber),
      bankCode: valid.bankCode(reference.bankCode),
    }),
  bank: (account, _, { loaders }) => loaders.bankLoader.load(account.bankCode),
};

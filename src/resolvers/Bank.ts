import type { BankResolvers } from '../__generated__/resolvers-types.ts';

export const Bank: BankResolvers = {
  __resolveReference: ({ code }, { loaders }) => loaders.bankLoader.load(code),
};

import type { BillCategoryResolvers } from '../__generated__/resolvers-types.ts';

export const BillCategory: BillCategoryResolvers = {
  // The bank has no read of one category; the request's one category-list call serves every reference.
  __resolveReference: async ({ id }, { loaders }) => (await loaders.billCategories()).find((c) => c.id === id) ?? null,
  bills: (category, _, { loaders }) => loaders.billsLoader.load(category.id),
};

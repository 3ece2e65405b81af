/** Relay's page information for a page read forward from its newest item: pages never run backwards. */
export function pageInfoOf<T>(items: readonly T[], hasNextPage: boolean, cursorOf: (item: T) => string) {
  const [first, last] = [items[0], items.at(-1)];
  return {
    hasNextPage,
    hasPreviousPage: false,
    startCursor: first === undefined ? null : cursorOf(first),
    endCursor: last === undefined ? null : cursorOf(last),
  };
}

import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';

const PAGE = `query($account: String, $first: Int, $after: String) {
  collectionNotifications(accountNumber: $account, first: $first, after: $after) {
    edges { cursor node { settlementId } }
    nodes { settlementId }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

interface Page {
  edges: { cursor: string; node: { settlementId: string } }[];
  nodes: { settlementId: string }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

describe('collectionNotifications', () => {
  it('pages newest first with opaque cursors until hasNextPage is false', async () => {
    const { deliver, query } = await startApp();
    const bodies = Array.from({ length: 5 }, () => notificationBody());
    for (const body of bodies) await deliver(body);
    const newestFirst = bodies.map((b) => b.settlementId).reverse();

    const seen: unknown[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const { data } = await query<{ collectionNotifications: Page }>(PAGE, { first: 2, after });
      const page: Page = data!.collectionNotifications;
      seen.push(...page.nodes.map((n) => n.settlementId));
      expect(page.edges.map((e) => e.node)).toEqual(page.nodes);
      expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor ?? null);
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
      expect(page.pageInfo.hasPreviousPage).toBe(false);
      pages += 1;
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(newestFirst);
    expect(pages).toBe(3);
  });

  it('gives 20 by default, filters by account, and an empty page for first: 0', async () => {
    const { deliver, query } = await startApp();
    for (let i = 0; i < 22; i += 1) await deliver(notificationBody({ accountNumber: i % 11 === 0 ? '2233445566' : '0123456789' }));
    const all = (await query(PAGE)).data!.collectionNotifications;
    expect(all.nodes).toHaveLength(20);
    expect(all.pageInfo.hasNextPage).toBe(true);
    const fatima = (await query(PAGE, { account: '2233445566' })).data!.collectionNotifications;
    expect(fatima.nodes).toHaveLength(2);
    expect(fatima.pageInfo.hasNextPage).toBe(false);
    const none = (await query(PAGE, { first: 0 })).data!.collectionNotifications;
    expect(none).toMatchObject({ nodes: [], pageInfo: { hasNextPage: true, startCursor: null, endCursor: null } });
  });
});

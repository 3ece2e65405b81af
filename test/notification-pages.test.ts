import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { confirmationOf, startConfirmingApp, transferOf } from './helpers/confirming.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';

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

describe('collectionNotifications by confirmation status', () => {
  const BY_STATUS = `query($confirmation: [ConfirmationStatus!], $first: Int, $after: String, $from: DateTime) {
    collectionNotifications(confirmation: $confirmation, first: $first, after: $after, from: $from) {
      nodes { settlementId confirmation { status } }
      pageInfo { hasNextPage endCursor }
    }
  }`;

  it('lists only the statuses asked for, pages among them, and lists nothing for an empty list', async () => {
    const bank = await startFakeCollectionBank();
    const app = await startConfirmingApp(bank);
    const [genuine, forged, tampered, later] = Array.from({ length: 4 }, () => notificationBody());
    bank.know(transferOf(genuine!));
    bank.know(transferOf(tampered!, { transactionAmount: '1.00' }));
    bank.know(transferOf(later!));
    for (const body of [genuine!, forged!, tampered!, later!]) expect((await app.deliver(body)).reply.responseCode).toBe('00');
    await confirmationOf(app, genuine!.settlementId, 'CONFIRMED');
    await confirmationOf(app, forged!.settlementId, 'NOT_AT_BANK');
    await confirmationOf(app, tampered!.settlementId, 'MISMATCHED');
    await confirmationOf(app, later!.settlementId, 'CONFIRMED');
    const list = async (variables: Record<string, unknown>) => {
      const { data, errors } = await app.query(BY_STATUS, variables);
      expect(errors).toBeUndefined();
      return data!.collectionNotifications as { nodes: { settlementId: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
    };
    const ids = (page: { nodes: { settlementId: string }[] }) => page.nodes.map((node) => node.settlementId);

    const first = await list({ confirmation: ['CONFIRMED'], first: 1 });
    expect(ids(first)).toEqual([later!.settlementId]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await list({ confirmation: ['CONFIRMED'], first: 1, after: first.pageInfo.endCursor });
    expect(ids(second)).toEqual([genuine!.settlementId]);
    expect(second.pageInfo.hasNextPage).toBe(false);
    expect(ids(await list({ confirmation: ['MISMATCHED', 'NOT_AT_BANK'] }))).toEqual([tampered!.settlementId, forged!.settlementId]);
    expect(ids(await list({ confirmation: ['NOT_AT_BANK'], from: '2000-01-01T00:00:00+01:00' }))).toEqual([forged!.settlementId]);
    expect(await list({ confirmation: [] })).toEqual({ nodes: [], pageInfo: { hasNextPage: false, endCursor: null } });
    expect(ids(await list({ confirmation: null }))).toHaveLength(4);
    const refused = await app.query(BY_STATUS, { confirmation: ['SETTLED'] });
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});

import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, type TestApp } from './helpers/app.ts';
import { scrape, scrapeText, subscribersLive } from './helpers/metrics.ts';
import { bearer, serveJwks, TEST_ISSUER, TestIssuer } from './helpers/tokens.ts';
import { waitFor } from './helpers/wait.ts';

const [OWN, ALSO_OWN, OTHER] = ['0123456789', '1234567890', '2233445566'];
const RANGE = { from: '2026-11-01T00:00:00+01:00', to: '2026-12-01T00:00:00+01:00' };

interface Fixture {
  app: TestApp;
  /** Headers of a caller with `collections:read` over `accounts` (or every account, with `all`). */
  caller(accounts: string[], scope?: string): Promise<Record<string, string>>;
  /** The settlementIds stored, by account, oldest first. */
  stored: Record<string, string[]>;
}

/** An app holding notifications of OWN, OTHER and ALSO_OWN, interleaved, each for 10.00 on 22 Nov. */
async function storedForThreeAccounts(): Promise<Fixture> {
  const issuer = await TestIssuer.create();
  const jwks = await serveJwks(issuer);
  // Posted straight to the webhook, unknown to the sandbox bank: confirmation, off here, would move
  // /metrics in the background (NOT_AT_BANK) while the tests compare what reads changed there.
  const app = await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, COLLECTION_CONFIRMATION: 'off' });
  const stored: Record<string, string[]> = { [OWN]: [], [ALSO_OWN]: [], [OTHER]: [] };
  for (const accountNumber of [OWN, OTHER, ALSO_OWN, OTHER, OWN, OTHER, OTHER]) {
    const body = notificationBody({ accountNumber, transactionAmount: '10.00', tranDateTime: '2026-11-22 14:05:09' });
    expect((await app.deliver(body)).reply.responseCode).toBe('00');
    stored[accountNumber]!.push(String(body.settlementId));
  }
  const caller = async (accounts: string[], scope = 'collections:read') => bearer(await issuer.sign({ scope, accounts }));
  return { app, caller, stored };
}

/**
 * What /metrics counts, series by series: timing sums and buckets, the process's own figures and
 * the scrapes themselves left out, so two requests that did the same thing read the same.
 */
async function countedSeries(app: TestApp): Promise<Map<string, number>> {
  const series = new Map<string, number>();
  for (const line of (await scrapeText(app)).split('\n')) {
    if (line === '' || line.startsWith('#') || /^(process|nodejs)_|_(bucket|sum)\{|route="\/metrics"/.test(line)) continue;
    const cut = line.lastIndexOf(' ');
    series.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return series;
}

/** The series that changed from `before` to `after`, and by how much. */
function changes(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  return Object.fromEntries(
    [...after].filter(([name, value]) => value !== (before.get(name) ?? 0)).map(([name, value]) => [name, value - (before.get(name) ?? 0)]),
  );
}

const PAGE =
  'query($account: String, $first: Int) { collectionNotifications(accountNumber: $account, first: $first) { nodes { settlementId accountNumber } pageInfo { hasNextPage } } }';
const SUMMARY = `query($account: String) { collectionSummary(accountNumber: $account, from: "${RANGE.from}", to: "${RANGE.to}") { count transactionAmount } }`;

describe("money records limited to the token's accounts", () => {
  it('lists only its accounts without accountNumber, in full pages, and refuses another account with FORBIDDEN and no rows', async () => {
    const { app, caller, stored } = await storedForThreeAccounts();
    const headers = await caller([OWN, ALSO_OWN]);
    const page = await app.query(PAGE, { first: 2 }, headers);
    expect(page.errors).toBeUndefined();
    expect(page.data!.collectionNotifications.nodes.map((n: { settlementId: string }) => n.settlementId)).toEqual([
      stored[OWN]![1],
      stored[ALSO_OWN]![0],
    ]);
    expect(page.data!.collectionNotifications.pageInfo.hasNextPage).toBe(true);

    const own = await app.query(PAGE, { account: ALSO_OWN }, headers);
    expect(own.data!.collectionNotifications.nodes).toHaveLength(1);

    const other = await app.query(PAGE, { account: OTHER }, headers);
    expect(other.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(other.data).toEqual({ collectionNotifications: null });
    expect(JSON.stringify(other)).not.toContain(stored[OTHER]![0]);
    expect(await scrape(app, 'graphql_authorization_refusals_total{reason="forbidden_account"}')).toBe(1);
  });

  it('totals only its accounts, and refuses another account’s total', async () => {
    const { app, caller } = await storedForThreeAccounts();
    const headers = await caller([OWN, ALSO_OWN]);
    expect((await app.query(SUMMARY, {}, headers)).data!.collectionSummary).toEqual({ count: 3, transactionAmount: '30.00' });
    expect((await app.query(SUMMARY, { account: OWN }, headers)).data!.collectionSummary).toEqual({ count: 2, transactionAmount: '20.00' });
    const other = await app.query(SUMMARY, { account: OTHER }, headers);
    expect(other.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(other.data).toEqual({ collectionSummary: null });
  });

  it('answers another account’s notification by settlementId and as an entity exactly as a missing one, its own beside it', async () => {
    const { app, caller, stored } = await storedForThreeAccounts();
    const headers = await caller([OWN]);
    const byId = (other: string) =>
      app.query(
        'query($own: ID!, $other: ID!) { own: collectionNotification(settlementId: $own) { accountNumber } other: collectionNotification(settlementId: $other) { accountNumber } }',
        { own: stored[OWN]![0], other },
        headers,
      );
    const before = await countedSeries(app);
    const probed = await byId(stored[OTHER]![0]!);
    const afterProbe = await countedSeries(app);
    expect(probed).toEqual({ status: 200, data: { own: { accountNumber: OWN }, other: null } });
    // Nothing tells a stored settlement of another account from one never stored: not the answer,
    // and not /metrics, where both count alike (no refusal: the caller asked for no account).
    expect(await byId('2026112299999999')).toEqual(probed);
    const afterMissing = await countedSeries(app);
    expect(changes(before, afterProbe)).toEqual(changes(afterProbe, afterMissing));
    expect(changes(before, afterProbe)).toHaveProperty(['graphql_operations_total{operation_type="query",outcome="ok"}']);
    expect(await scrape(app, 'graphql_authorization_refusals_total{reason="forbidden_account"}')).toBe(0);

    const entities = (other: string) =>
      app.query(
        'query($r: [_Any!]!) { _entities(representations: $r) { ... on CollectionNotification { settlementId transactionAmount } } }',
        { r: [other, stored[OWN]![0]].map((settlementId) => ({ __typename: 'CollectionNotification', settlementId })) },
        headers,
      );
    const beforeEntity = await countedSeries(app);
    const probedEntity = await entities(stored[OTHER]![0]!);
    const afterEntity = await countedSeries(app);
    expect(probedEntity).toEqual({
      status: 200,
      data: { _entities: [null, { settlementId: stored[OWN]![0], transactionAmount: '10.00' }] },
    });
    expect(await entities('2026112299999999')).toEqual(probedEntity);
    expect(changes(beforeEntity, afterEntity)).toEqual(changes(afterEntity, await countedSeries(app)));
  });

  it('gives collections:read:all every account, and an empty accounts claim nothing', async () => {
    const { app, caller } = await storedForThreeAccounts();
    const all = await app.query(SUMMARY, {}, await caller([], 'collections:read:all'));
    expect(all.data!.collectionSummary).toEqual({ count: 7, transactionAmount: '70.00' });
    expect(
      (await app.query(PAGE, { account: OTHER }, await caller([], 'collections:read:all'))).data!.collectionNotifications.nodes,
    ).toHaveLength(4);
    const none = await caller([]);
    expect((await app.query(SUMMARY, {}, none)).data!.collectionSummary).toEqual({ count: 0, transactionAmount: '0.00' });
    expect((await app.query(PAGE, {}, none)).data!.collectionNotifications.nodes).toEqual([]);
  });

  it('replays and delivers live only its accounts’ notifications, and refuses a subscription to another account', async () => {
    const { app, caller, stored } = await storedForThreeAccounts();
    const headers = await caller([OWN, ALSO_OWN]);
    const first = await app.query(
      'query($id: ID!) { collectionNotification(settlementId: $id) { cursor } }',
      { id: stored[OWN]![0] },
      headers,
    );
    const client = app.wsClient({ headers });
    const events = client.iterate({
      query: 'subscription($after: String) { incomingTransfer(after: $after) { settlementId accountNumber } }',
      variables: { after: first.data!.collectionNotification.cursor },
    });
    const replayed = [(await events.next()).value.data.incomingTransfer, (await events.next()).value.data.incomingTransfer];
    expect(replayed.map((n: { settlementId: string }) => n.settlementId)).toEqual([stored[ALSO_OWN]![0], stored[OWN]![1]]);

    const next = events.next();
    await waitFor(async () => ((await scrape(app, 'graphql_active_subscriptions')) === 1 ? true : undefined));
    const theirs = notificationBody({ accountNumber: OTHER });
    const ours = notificationBody({ accountNumber: ALSO_OWN });
    await app.deliver(theirs);
    await app.deliver(ours);
    expect((await next).value.data.incomingTransfer.settlementId).toBe(ours.settlementId);

    const refused = client.iterate({ query: `subscription { incomingTransfer(accountNumber: "${OTHER}") { settlementId } }` });
    expect((await refused.next()).value.errors).toEqual([expect.objectContaining({ extensions: { code: 'FORBIDDEN' } })]);
    await subscribersLive(app, 1);
  });
});

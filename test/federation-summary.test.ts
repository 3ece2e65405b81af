import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { startApolloGateway } from './helpers/router.ts';

// What a product app sees through the router: the supergraph composed from this subgraph's SDL,
// with the summary types (no @key: they are values computed per request, never entities that
// another subgraph could reference or extend).
const SCREEN = `query Today($account: String!, $from: DateTime!, $to: DateTime!) {
  collectionSummary(accountNumber: $account, from: $from, to: $to) {
    count transactionAmount feeAmount
    days { date from to count transactionAmount }
  }
  collectionNotifications(accountNumber: $account, from: $from, to: $to, first: 10) {
    nodes { settlementId transactionAmount transactionTime }
  }
}`;

describe('collectionSummary through a router composing the supergraph', () => {
  it('composes the summary types, keyless and priced at no bank call, into the supergraph', async () => {
    const { query } = await startApp();
    const sdl: string = (await query('{ _service { sdl } }')).data!._service.sdl;
    const result = composeServices([{ name: 'bank', typeDefs: parse(sdl), url: 'http://bank' }]);
    expect(result.errors ?? []).toEqual([]);
    const supergraph = result.supergraphSdl!;
    expect(supergraph).toContain(
      'collectionSummary(accountNumber: String, from: DateTime!, to: DateTime!, confirmed: Boolean = false): CollectionSummary @authenticated @requiresScopes(scopes: [["collections:read"], ["collections:read:all"]]) @cost(weight: 0)',
    );
    expect(supergraph).toContain('days: [CollectionDaySummary!]! @listSize(assumedSize: 31)');
    expect(supergraph).toMatch(/type CollectionSummary\n\s+@join__type\(graph: BANK\)\n\{/);
    expect(supergraph).toMatch(/type CollectionDaySummary\n\s+@join__type\(graph: BANK\)\n\{/);
  });

  it('serves the summary and the ranged page as the subgraph does, and passes BAD_USER_INPUT on', async () => {
    // Confirmation off: the sandbox bank never made these transfers, and a summary leaves out what it refutes.
    const subgraph = await startApp({ PUBLISH_ACCESS_DIRECTIVES: 'false', COLLECTION_CONFIRMATION: 'off' });
    const bodies = [
      notificationBody({ transactionAmount: '0.10', feeAmount: '0.10', tranDateTime: '2026-11-22 00:30:00' }),
      notificationBody({ transactionAmount: '0.20', feeAmount: '0.20', tranDateTime: '2026-11-22 09:15:00' }),
      notificationBody({ transactionAmount: '999999999999.99', feeAmount: '0.10', tranDateTime: '2026-11-23 00:00:00' }),
    ];
    for (const body of bodies) expect((await subgraph.deliver(body)).reply.responseCode).toBe('00');
    const router = await startApolloGateway([{ name: 'bank', url: subgraph.graphqlUrl }]);

    const variables = { account: '0123456789', from: '2026-11-22T00:00:00+01:00', to: '2026-11-23T00:00:00+01:00' };
    const routed = await router.query(SCREEN, variables);
    expect(routed.errors).toBeUndefined();
    expect(routed.data!.collectionSummary).toEqual({
      count: 2,
      transactionAmount: '0.30',
      feeAmount: '0.30',
      days: [
        {
          date: '2026-11-22',
          from: '2026-11-22T00:00:00.000+01:00',
          to: '2026-11-23T00:00:00.000+01:00',
          count: 2,
          transactionAmount: '0.30',
        },
      ],
    });
    expect(routed.data!.collectionNotifications.nodes.map((n: { settlementId: string }) => n.settlementId)).toEqual([
      bodies[1]!.settlementId,
      bodies[0]!.settlementId,
    ]);
    expect(routed.data).toEqual((await subgraph.query(SCREEN, variables)).data);

    const refused = await router.query(SCREEN, { ...variables, to: variables.from });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});

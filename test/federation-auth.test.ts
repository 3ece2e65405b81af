import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, untilListed } from './helpers/app.ts';
import { startApolloGateway } from './helpers/router.ts';
import { bearer, serveJwks, TEST_ISSUER, TestIssuer } from './helpers/tokens.ts';

const OPERATION = `{
  banks { code }
  account(accountNumber: "0123456789", bankCode: "000023") { accountName bank { name } }
  collectionNotifications(first: 5) { nodes { settlementId accountNumber } }
}`;

// A router that composes the supergraph forwards the caller's token, and the subgraph, which
// never trusts being reachable only through it, answers the same as when called directly.
describe('authorization through a router', () => {
  it('answers a forwarded token exactly as the subgraph answers it directly, and refuses the same without one', async () => {
    const issuer = await TestIssuer.create();
    const jwks = await serveJwks(issuer);
    const subgraph = await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, PUBLISH_ACCESS_DIRECTIVES: 'false' });
    const router = await startApolloGateway([{ name: 'bank', url: subgraph.graphqlUrl }]);
    const own = notificationBody({ accountNumber: '0123456789' });
    await subgraph.deliver(notificationBody({ accountNumber: '2233445566' }));
    await subgraph.deliver(own);
    const headers = bearer(await issuer.sign({ scope: 'accounts:read collections:read', accounts: ['0123456789'] }));
    await untilListed({ ...subgraph, query: (q, v) => subgraph.query(q, v, headers) }, own.settlementId);

    const direct = await subgraph.query(OPERATION, undefined, headers);
    const routed = await router.query(OPERATION, undefined, headers);
    expect(direct.errors).toBeUndefined();
    expect(routed.errors).toBeUndefined();
    expect(routed.data).toEqual(direct.data);
    expect(routed.data!.collectionNotifications.nodes.map((n: { accountNumber: string }) => n.accountNumber)).toEqual(['0123456789']);

    // Nullable fields only: a refused non-null one (the connection) would null the whole data, as it should.
    const anonymous = await router.query('{ banks { code } account(accountNumber: "0123456789", bankCode: "000023") { accountName } }');
    expect(anonymous.data).toEqual({ banks: direct.data!.banks, account: null });
    expect(anonymous.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
  });
});

// Floor for the queries: a bare Federation 2 subgraph served the way ours is (Fastify, Apollo Server
// through @as-integrations/fastify, buildSubgraphSchema), Apollo's defaults and nothing of ours.
// It answers the bench's queries from memory, with the same shapes and sizes as ours: the sandbox's
// bank list (or, with FLOOR_BANK_LIST=<n>, the long list ours gets from its stand-in bank), and a
// static account with its bank. So each ratio is what our work behind the same query costs: plugins
// and the caches for `banks`, the sandbox bank call for `account`.
import { ApolloServer } from '@apollo/server';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import Fastify from 'fastify';
import { parse } from 'graphql';
import { sandboxAccounts, sandboxBanks } from '../../../src/sandbox/data.ts';
import { benchBankList } from '../bank-list.ts';
import { hostForBench } from '../host.ts';

const typeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
  type Query {
    banks: [Bank!]!
    account(accountNumber: String!, bankCode: String): Account
  }
  type Bank @key(fields: "code") { code: String! name: String! }
  type Account @key(fields: "accountNumber bankCode") { accountNumber: String! bankCode: String! accountName: String! bank: Bank }
`);

interface Bank {
  code: string;
  name: string;
}
const list = process.env.FLOOR_BANK_LIST ? benchBankList(Number(process.env.FLOOR_BANK_LIST)) : sandboxBanks;
const banks: Bank[] = list.map((bank) => ({ code: bank.bankCode, name: bank.bankName }));
const bankByCode = new Map(banks.map((bank) => [bank.code, bank]));
const account = sandboxAccounts[0]!;

const resolvers: GraphQLResolverMap<unknown> = {
  Query: {
    banks: () => banks,
    account: () => account,
  },
  Account: { bank: (parent: { bankCode: string }) => bankByCode.get(parent.bankCode) ?? null },
};
const schema = buildSubgraphSchema([{ typeDefs, resolvers }]);

// Apollo's defaults, but its info line ("Enabling inline tracing…") would land in the bench's table.
const quiet = { debug() {}, info() {}, warn: console.warn, error: console.error };
const apollo = new ApolloServer({ schema, logger: quiet });
await apollo.start();
const fastify = Fastify();
fastify.route({ url: '/graphql', method: ['GET', 'POST'], handler: fastifyApolloHandler(apollo) });

await hostForBench({
  async listen(port) {
    await fastify.listen({ port, host: '127.0.0.1' });
    const address = fastify.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`;
  },
  subscriptions: () => 0,
  async close() {
    await fastify.close();
    await apollo.stop();
  },
});

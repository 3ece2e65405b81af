import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControl } from '@apollo/server/plugin/cacheControl';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ANONYMOUS, type Caller } from '../auth/caller.ts';
import { enforceAccessRules } from '../auth/enforce.ts';
import { createLogger } from '../logger.ts';
import { createMetrics } from '../metrics.ts';
import { responseCachePlugins } from './response-cache.ts';

// A schema whose hints and access rules disagree: a public type with a guarded field. The product's
// schema has none (its guarded types are all no-store), but nothing in the hints alone prevents one.
const schema = buildSubgraphSchema([
  {
    typeDefs: parse(`
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@requiresScopes"])
    enum CacheControlScope { PUBLIC PRIVATE }
    directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
    type Query { catalogue: Catalogue }
    type Catalogue @cacheControl(maxAge: 60, scope: PUBLIC) {
      name: String
      secret: String @requiresScopes(scopes: [["secrets:read"]])
    }
  `),
    resolvers: { Query: { catalogue: () => ({ name: 'open', secret: 'only for secrets:read' }) } },
  },
]);
enforceAccessRules(schema, () => undefined);

const READER: Caller = {
  kind: 'verified',
  scopes: new Set(['secrets:read']),
  accounts: [],
  lifetime: { acceptedUntil: Date.now() + 600_000, onKeyWithdrawn: () => () => undefined },
  subject: 'reader',
};

async function startServer() {
  const metrics = createMetrics();
  const server = new ApolloServer({
    schema,
    logger: createLogger('silent'),
    plugins: [ApolloServerPluginCacheControl({ defaultMaxAge: 0 }), ...responseCachePlugins({ schema, catalogueMaxAgeS: 60, metrics })],
  });
  await server.start();
  const run = async (query: string, caller: Caller) => {
    const contextValue = { caller, loaders: { oldestReferenceCopy: () => undefined } };
    const { body } = await server.executeOperation({ query }, { contextValue });
    return body.kind === 'single' ? body.singleResult : undefined;
  };
  const counted = async () => Object.fromEntries((await metrics.responseCache.get()).values.map((v) => [v.labels.outcome, v.value]));
  return { server, run, counted };
}

describe('responseCachePlugins', () => {
  it('never keeps an answer whose document reads a guarded field, public as the hints make it', async () => {
    const { server, run, counted } = await startServer();
    try {
      const query = '{ catalogue { name secret } }';
      expect((await run(query, READER))?.data).toEqual({ catalogue: { name: 'open', secret: 'only for secrets:read' } });
      const anonymous = await run(query, ANONYMOUS);
      expect(anonymous?.data).toEqual({ catalogue: { name: 'open', secret: null } });
      expect(anonymous?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(await counted()).toEqual({ hit: 0, miss: 0 });
    } finally {
      await server.stop();
    }
  });

  it('keeps the answer of a document reading only unguarded public fields, for anyone', async () => {
    const { server, run, counted } = await startServer();
    try {
      const query = '{ catalogue { name } }';
      await run(query, READER);
      expect((await run(query, ANONYMOUS))?.data).toEqual({ catalogue: { name: 'open' } });
      expect(await counted()).toEqual({ hit: 1, miss: 1 });
    } finally {
      await server.stop();
    }
  });
});

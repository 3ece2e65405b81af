import { ApolloGateway, IntrospectAndCompose } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { request } from 'undici';
import type { GraphQLResponse } from './app.ts';
import { onCleanup } from './cleanup.ts';

/**
 * Apollo's JavaScript router (@apollo/gateway): it fetches each subgraph's SDL, composes the
 * supergraph, and plans every operation over the subgraphs by HTTP, as a production router does.
 * Listens on a free loopback port; stopped after the test.
 */
export async function startRouter(subgraphs: { name: string; url: string }[]) {
  const gateway = new ApolloGateway({ supergraphSdl: new IntrospectAndCompose({ subgraphs }) });
  const server = new ApolloServer({ gateway });
  const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
  onCleanup(() => server.stop());
  return {
    url,
    async query<T = Record<string, any>>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>> {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.statusCode, ...((await response.body.json()) as object) } as GraphQLResponse<T>;
    },
  };
}

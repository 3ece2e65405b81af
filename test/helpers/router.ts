import { ApolloGateway, IntrospectAndCompose, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { request } from 'undici';
import type { GraphQLResponse } from './app.ts';
import { onCleanup } from './cleanup.ts';

/** What the router keeps of a client's request: its Authorization header, forwarded to every subgraph. */
interface RouterContext {
  authorization?: string | undefined;
}

/**
 * The supergraph with its access features (@authenticated, @requiresScopes) no longer marked
 * `for: SECURITY`. @apollo/gateway cannot enforce them, so it rightly refuses to serve a supergraph
 * that asks it to; Apollo Router and Hive Router do enforce them. Here the subgraph's own
 * enforcement answers, which is what it must do whatever router is in front of it.
 */
function withoutSecurityFeatures(supergraphSdl: string): string {
  return supergraphSdl.replaceAll(', for: SECURITY)', ')');
}

/**
 * Apollo's JavaScript router (@apollo/gateway): it fetches each subgraph's SDL, composes the
 * supergraph, and plans every operation over the subgraphs by HTTP, as a production router does.
 * It forwards the client's Authorization header to the subgraphs (Apollo Router's
 * `headers: all: request: - propagate: named: Authorization`). Listens on a free loopback port;
 * stopped after the test.
 */
export async function startRouter(subgraphs: { name: string; url: string }[]) {
  const introspection = new IntrospectAndCompose({ subgraphs });
  const gateway = new ApolloGateway({
    supergraphSdl: {
      async initialize(options) {
        const { supergraphSdl, cleanup } = await introspection.initialize({ ...options, update: (sdl) => options.update(withoutSecurityFeatures(sdl)) });
        return { supergraphSdl: withoutSecurityFeatures(supergraphSdl), cleanup };
      },
    },
    buildService: ({ url }) =>
      new RemoteGraphQLDataSource<RouterContext>({
        url,
        willSendRequest({ request: subgraphRequest, context }) {
          if (context.authorization) subgraphRequest.http?.headers.set('authorization', context.authorization);
        },
      }),
  });
  const server = new ApolloServer<RouterContext>({ gateway });
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => ({ authorization: req.headers.authorization }),
  });
  onCleanup(() => server.stop());
  return {
    url,
    async query<T = Record<string, any>>(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<GraphQLResponse<T>> {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.statusCode, ...((await response.body.json()) as object) } as GraphQLResponse<T>;
    },
  };
}

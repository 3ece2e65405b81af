import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { composeServices } from '@apollo/composition';
import { ApolloGateway, IntrospectAndCompose, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { parse } from 'graphql';
import { request } from 'undici';
import type { GraphQLResponse } from './app.ts';
import { onCleanup } from './cleanup.ts';
import { tempDirectory } from './stores.ts';

/** What the router keeps of a client's request: its Authorization header, forwarded to every subgraph. */
interface RouterContext {
  authorization?: string | undefined;
}

export interface TestRouter {
  url: string;
  query<T = Record<string, any>>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<T>>;
}

/**
 * Apollo's JavaScript gateway (@apollo/gateway): it fetches each subgraph's SDL, composes the
 * supergraph, and plans every operation over the subgraphs by HTTP, as a production router does.
 * It refuses a supergraph with `for: SECURITY` features (it cannot enforce them), so its subgraphs
 * publish without their access directives (PUBLISH_ACCESS_DIRECTIVES=false) and enforce them
 * themselves. It forwards the client's Authorization header to the subgraphs (Apollo Router's
 * `headers: all: request: - propagate: named: Authorization`). Stopped after the test.
 */
export async function startApolloGateway(subgraphs: { name: string; url: string }[]): Promise<TestRouter> {
  const gateway = new ApolloGateway({
    supergraphSdl: new IntrospectAndCompose({ subgraphs }),
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
  return { url, query: (query, variables, headers) => postGraphQL(url, query, variables, headers) };
}

/**
 * Hive Gateway over a supergraph composed from the subgraphs' published SDL, access directives
 * included, which it enforces itself in front of the subgraphs (hive-gateway-process.ts); in a
 * process of its own, as it is deployed. Killed after the test.
 */
export async function startHiveGateway(
  subgraphs: { name: string; url: string; sdl: string }[],
): Promise<TestRouter & { supergraph: string }> {
  const composed = composeServices(subgraphs.map(({ name, url, sdl }) => ({ name, url, typeDefs: parse(sdl) })));
  if (composed.errors !== undefined) throw new Error(composed.errors.map((error) => error.message).join('\n'));
  const supergraph = composed.supergraphSdl;
  const file = join(tempDirectory(), 'supergraph.graphql');
  writeFileSync(file, supergraph);
  const child = spawn(process.execPath, [join(import.meta.dirname, 'hive-gateway-process.ts'), file], {
    env: { PATH: process.env.PATH, HIVE_LOGGING: process.env.HIVE_LOGGING ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onCleanup(async () => {
    child.kill('SIGKILL');
    await once(child, 'exit');
  });
  let url: string | undefined;
  for await (const line of createInterface({ input: child.stdout })) {
    url = /^listening at (\S+)$/.exec(line)?.[1];
    if (url !== undefined) break;
    // Its own log lines (HIVE_LOGGING=debug), passed on for whoever debugs a test.
    console.log(line);
  }
  if (url === undefined) throw new Error('Hive Gateway exited before listening');
  return { url, supergraph, query: (query, variables, headers) => postGraphQL(url, query, variables, headers) };
}

async function postGraphQL<T>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<T>> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.statusCode, ...((await response.body.json()) as object) };
}

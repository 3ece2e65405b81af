// Hive Gateway in a process of its own, as the `hive-gateway` binary runs it: its runtime over the
// supergraph in the file argv[2], enforcing the access directives itself (its generic-auth plugin
// reads `@authenticated` and `@requiresScopes`) and forwarding the caller's Authorization header.
// It reads the token's scopes without verifying it: the subgraph behind it verifies. Prints its
// URL once listening. Started by startHiveGateway (router.ts).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { decodeJwt } from 'jose';

const gateway = createGatewayRuntime({
  supergraph: readFileSync(process.argv[2]!, 'utf8'),
  logging: process.env.HIVE_LOGGING === 'debug' ? 'debug' : false,
  genericAuth: {
    mode: 'protect-granular',
    // A refused field is null with its error, the rest answered, as the subgraph and Apollo Router answer.
    rejectUnauthenticated: false,
    resolveUserFn: ({ request: { headers } }) => {
      const token = /^Bearer (.+)$/.exec(headers.get('authorization') ?? '')?.[1];
      if (token === undefined) return null;
      const { scope } = decodeJwt(token);
      return { scope: typeof scope === 'string' ? scope : '' };
    },
    extractScopes: (user: Record<string, any> | null) =>
      String(user?.scope ?? '')
        .split(' ')
        .filter((scope) => scope !== ''),
  },
  propagateHeaders: {
    fromClientToSubgraphs: ({ request: { headers } }) => ({ authorization: headers.get('authorization') ?? '' }),
  },
});
const server = createServer((request, response) => void gateway(request, response));
server.listen(0, '127.0.0.1', () => console.log(`listening at http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`));

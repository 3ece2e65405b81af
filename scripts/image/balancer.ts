// compose.yaml's balancer, run from the same Caddyfile in front of the image test's two PostgreSQL
// replicas, when this machine has Caddy (Debian's package): the compose file's one piece that runs
// no image of ours, checked as far as this machine allows.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { installed } from './commands.ts';
import type { Cleanup, Deployment } from './replicas.ts';
import { statusOf, waitUntil } from './subgraph-client.ts';

export interface Balancer {
  graphqlBase: string;
  webhookBase: string;
}

/**
 * Starts Caddy on the Caddyfile compose.yaml mounts, its upstreams pointed at replicas a and b;
 * undefined without Caddy, except under CI=true, where CI must run every check.
 */
export async function startBalancer(
  repository: string,
  deployment: Deployment,
  ports: { graphql: number; webhook: number },
  cleanup: Cleanup,
): Promise<Balancer | undefined> {
  if (!(await installed('caddy'))) {
    if (process.env.CI === 'true') throw new Error('caddy is not installed (apt-get install caddy): CI=true runs the compose balancer too');
    return undefined;
  }
  const home = mkdtempSync('/var/tmp/bank-subgraph-balancer-');
  cleanup(() => rmSync(home, { recursive: true, force: true }));
  const { a, b } = deployment.replicas;
  const caddy = spawn('caddy', ['run', '--config', join(repository, 'deploy/compose/Caddyfile'), '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_DATA_HOME: home,
      XDG_CONFIG_HOME: home,
      GRAPHQL_LISTEN_PORT: String(ports.graphql),
      WEBHOOK_LISTEN_PORT: String(ports.webhook),
      SUBGRAPH_1: a.host,
      SUBGRAPH_2: b.host,
      SUBGRAPH_PORT: String(deployment.port),
      SUBGRAPH_WEBHOOK_PORT: String(deployment.webhookPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [caddy.stdout, caddy.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(caddy, 'exit');
  cleanup(async () => {
    if (caddy.exitCode === null && caddy.signalCode === null) caddy.kill('SIGTERM');
    await exited;
  });
  const balancer = { graphqlBase: `http://127.0.0.1:${ports.graphql}`, webhookBase: `http://127.0.0.1:${ports.webhook}` };
  await waitUntil(
    'the balancer forwarding to the replicas',
    async () => {
      if (caddy.exitCode !== null) throw new Error(`caddy exited ${caddy.exitCode}:\n${output}`);
      return (await statusOf(`${balancer.webhookBase}/health/ready`)) === 200 ? true : undefined;
    },
    15_000,
  );
  return balancer;
}

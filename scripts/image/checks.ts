// What the running containers must do, in the order an operator would see it: serve, take the bank's
// deliveries once across replicas, hand them to a subscriber on another replica, and drain on SIGTERM.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Balancer } from './balancer.ts';
import { containerLogs, podman, signalContainer, waitForExit } from './podman.ts';
import type { Deployment, Replica } from './replicas.ts';
import { deliver, graphql, statusOf, subscribe, waitUntil, type Subscriber } from './subgraph-client.ts';

const ACCOUNT = '0123456789';
/** The contract's promise: exit within 10 s of SIGTERM. */
const DRAIN_LIMIT_MS = 10_000;
/** Marks this run's settlementIds, so a rerun on the same store never collides. */
const runId = randomBytes(4).toString('hex');
const subscribers: Subscriber[] = [];

function check(ok: unknown, failure: string): asserts ok {
  if (!ok) throw new Error(failure);
}

export interface CheckContext {
  deployment: Deployment;
  balancer: Balancer | undefined;
  /** A token with scope collections:read:all. */
  token: string;
  progress: (line: string) => void;
}

/** Runs every check against the running deployment; throws at the first failure, with the containers' logs. */
export async function runChecks(context: CheckContext): Promise<void> {
  const replicas = Object.values(context.deployment.replicas);
  try {
    await servingChecks(context);
    await drainChecks(context);
    for (const replica of replicas) {
      const logs = await containerLogs(replica.name);
      check(!logs.includes(context.deployment.webhook.secret) && !logs.includes(context.token), `${replica.name} logged a secret`);
    }
    context.progress('logs: no secret, no token');
  } catch (error) {
    const logs = await Promise.all(
      replicas.map(
        async (replica) => `--- ${replica.name}\n${(await containerLogs(replica.name)).trimEnd().split('\n').slice(-30).join('\n')}`,
      ),
    );
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`);
  } finally {
    await Promise.all(subscribers.map((subscriber) => subscriber.dispose()));
  }
}

async function servingChecks({ deployment, balancer, token, progress }: CheckContext): Promise<void> {
  const { a, b, sqlite } = deployment.replicas;
  const id = (n: number) => `IMG-${runId}-${n}`;
  const deliverTo = (replica: Replica | Balancer, n: number) =>
    deliver(`${replica.webhookBase}/webhooks/collection`, deployment.webhook, {
      settlementId: id(n),
      sessionId: `S-${id(n)}`,
      accountNumber: ACCOUNT,
    });

  const pid1 = (await podman(['exec', a.name, 'cat', '/proc/1/cmdline'])).stdout.split('\0').filter(Boolean).join(' ');
  check(pid1 === 'node src/main.ts', `PID 1 of replica a is "${pid1}", not node src/main.ts`);
  progress('PID 1: node src/main.ts');

  const banks = await graphql(`${a.graphqlBase}/graphql`, '{ banks { code name } }');
  check((banks.data?.banks?.length ?? 0) > 0, `banks on replica a: ${JSON.stringify(banks)}`);
  progress(`query: banks on replica a, ${banks.data!.banks.length} banks`);
  const anonymous = await graphql(`${b.graphqlBase}/graphql`, '{ collectionNotifications(first: 1) { nodes { settlementId } } }');
  check(
    anonymous.errors?.[0]?.extensions?.code === 'UNAUTHENTICATED',
    `collectionNotifications without a token: ${JSON.stringify(anonymous)}`,
  );
  progress('authorization on: collectionNotifications without a token is UNAUTHENTICATED');
  const routes = {
    metrics: await statusOf(`${a.graphqlBase}/metrics`),
    healthOnPort: await statusOf(`${a.graphqlBase}/health/ready`),
    graphqlOnWebhookPort: await statusOf(`${a.webhookBase}/graphql`),
  };
  check(
    routes.metrics === 200 && routes.healthOnPort === 404 && routes.graphqlOnWebhookPort === 404,
    `routes by port: ${JSON.stringify(routes)}`,
  );
  progress('ports: /graphql and /metrics on PORT only; the webhook and /health/* on WEBHOOK_PORT only');

  check((await deliverTo(a, 1)) === '00', `${id(1)} on replica a: not 00`);
  check((await deliverTo(b, 1)) === '01', `${id(1)} again on replica b: not 01`);
  progress('webhook: 00 on replica a, the same settlementId 01 on replica b');

  const page = await graphql(
    `${b.graphqlBase}/graphql`,
    'query ($account: String) { collectionNotifications(accountNumber: $account, first: 1) { nodes { settlementId cursor } } }',
    { account: ACCOUNT },
    token,
  );
  const first = page.data?.collectionNotifications?.nodes?.[0] as { settlementId: string; cursor: string } | undefined;
  check(first?.settlementId === id(1), `collectionNotifications with a token on replica b: ${JSON.stringify(page)}`);
  progress('query with a token: replica b reads what replica a stored');

  // Resuming after the first, the subscriber misses nothing stored after it, however soon it is live.
  const subscriber = subscribe(`ws://${b.host}:${deployment.port}/graphql`, token, ACCOUNT, first.cursor);
  subscribers.push(subscriber);
  check((await deliverTo(a, 2)) === '00', `${id(2)} on replica a: not 00`);
  await subscriber.receives(id(2), 5_000);
  const sent = performance.now();
  check((await deliverTo(a, 3)) === '00', `${id(3)} on replica a: not 00`);
  await subscriber.receives(id(3), 5_000);
  progress(
    `subscriber on replica b: received what replica a stored, the live one ${(performance.now() - sent).toFixed(0)} ms after its 00`,
  );

  if (balancer) {
    const through = await graphql(`${balancer.graphqlBase}/graphql`, '{ banks { code } }');
    check((through.data?.banks?.length ?? 0) > 0, `banks through the balancer: ${JSON.stringify(through)}`);
    // PORT serves /metrics too, but the balancer publishes /graphql alone.
    const metrics = await statusOf(`${balancer.graphqlBase}/metrics`);
    check(metrics === 404, `/metrics through the balancer: ${metrics}; expected 404`);
    const viaBalancer = subscribe(`ws://127.0.0.1:${new URL(balancer.graphqlBase).port}/graphql`, token, ACCOUNT, first.cursor);
    subscribers.push(viaBalancer);
    check((await deliverTo(balancer, 4)) === '00', `${id(4)} through the balancer: not 00`);
    await Promise.all([subscriber.receives(id(4), 5_000), viaBalancer.receives(id(4), 5_000)]);
    check(viaBalancer.received.join() === [2, 3, 4].map(id).join(), `through the balancer, received ${viaBalancer.received.join(', ')}`);
    progress('balancer: a query, a WebSocket subscription and a webhook 00 through the Caddyfile compose runs; /metrics not through it');
  }
  check(
    subscriber.received.join() === [2, 3, ...(balancer ? [4] : [])].map(id).join(),
    `subscriber received ${subscriber.received.join(', ')}: a gap or a duplicate`,
  );

  check(
    (await deliver(`${sqlite.webhookBase}/webhooks/collection`, deployment.webhook, { settlementId: id(9), sessionId: `S-${id(9)}` })) ===
      '00',
    'the SQLite replica: not 00',
  );
  check(existsSync(join(deployment.dataDir, 'collections.db')), 'the SQLite replica wrote no collections.db on its data volume');
  progress('SQLite default: 00, stored on the data volume under a read-only root filesystem');
}

async function drainChecks({ deployment, progress }: CheckContext): Promise<void> {
  const replicas = Object.values(deployment.replicas);
  const signalled = performance.now();
  await Promise.all(replicas.map((replica) => signalContainer(replica.name, 'SIGTERM')));
  // Out of rotation at once: readiness 503, or the listening socket already closed.
  const { b } = deployment.replicas;
  const outOfRotation = await waitUntil(
    'readiness after SIGTERM',
    async () => {
      const status = await statusOf(`${b.webhookBase}/health/ready`);
      return status === 200 ? undefined : status;
    },
    1_000,
  );
  const exits = await Promise.all(
    replicas.map(async (replica) => {
      const code = await waitForExit(replica.name);
      return { replica, code, ms: performance.now() - signalled, insideMs: await drainInside(replica.name) };
    }),
  );
  const closeCodes = await Promise.all(
    subscribers.map((subscriber) => Promise.race([subscriber.closed, new Promise((resolve) => setTimeout(() => resolve('open'), 2_000))])),
  );
  for (const { replica, code, ms, insideMs } of exits) {
    progress(
      `drain: ${replica.name.replace(/.*-/, 'replica ')} exited ${code} ${(ms / 1000).toFixed(2)} s after SIGTERM (${(insideMs / 1000).toFixed(2)} s from its 'draining' line to its end)`,
    );
    check(
      code === 0 && ms < DRAIN_LIMIT_MS,
      `${replica.name}: exit ${code} after ${ms.toFixed(0)} ms; the contract is 0 within ${DRAIN_LIMIT_MS} ms`,
    );
    check((await containerLogs(replica.name)).includes('"msg":"drained, exiting"'), `${replica.name}: no 'drained, exiting' line`);
  }
  check(
    closeCodes.every((code) => code === 1001),
    `subscribers' close codes: ${closeCodes.join(', ')}; expected 1001`,
  );
  progress(
    `drain: readiness ${outOfRotation === 'refused' ? 'refused (listener closed)' : outOfRotation} at once; every subscriber closed with 1001`,
  );
}

/** From the container's 'draining' log line to the end of its process, as the container's own clocks tell. */
async function drainInside(name: string): Promise<number> {
  const logs = await containerLogs(name);
  const line = logs.split('\n').find((each) => each.includes('"draining'));
  const draining = line ? (JSON.parse(line) as { time: number }).time : Number.NaN;
  const { stdout } = await podman(['inspect', '--format', '{{.State.FinishedAt.UnixMilli}}', name]);
  return Number(stdout.trim()) - draining;
}

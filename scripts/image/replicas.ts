// The containers the image test runs, configured as production runs them: two replicas on the
// machine's PostgreSQL (a schema of their own) and Redis, and one on the SQLite default, its data on
// a volume. Each binds its own loopback address, so all three serve the same two ports, as replicas
// on separate hosts would.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { containerLogs, removeContainer, startContainer } from './podman.ts';
import { statusOf, waitUntil } from './subgraph-client.ts';

export interface Replica {
  name: string;
  host: string;
  /** http://host:PORT: /graphql and /metrics. */
  graphqlBase: string;
  /** http://host:WEBHOOK_PORT: the webhook and /health/*. */
  webhookBase: string;
}

export interface Deployment {
  replicas: { a: Replica; b: Replica; sqlite: Replica };
  port: number;
  webhookPort: number;
  webhook: { clientId: string; secret: string };
  /** The SQLite replica's data volume on the host. */
  dataDir: string;
}

/** Whatever the test made, undone in reverse order, whether it passed or not. */
export type Cleanup = (undo: () => unknown) => void;

/** A port free on every one of `hosts`. */
export async function freePortOn(hosts: readonly string[]): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const port = await listenOnce(hosts[0]!, 0);
    if (port === undefined) continue;
    const others = await Promise.all(hosts.slice(1).map((host) => listenOnce(host, port)));
    if (others.every((each) => each === port)) return port;
  }
  throw new Error(`no port free on every one of ${hosts.join(', ')}`);
}

/** Listens on `host:port` and closes at once; resolves to the port, or undefined when it was taken. */
function listenOnce(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, host, () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

/** A fresh PostgreSQL schema on `databaseUrl`'s server; resolves to a STORE_URL whose connections use it. */
async function isolatedSchema(databaseUrl: string, cleanup: Cleanup): Promise<string> {
  const schema = `image_test_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE SCHEMA ${schema}`);
  cleanup(() => run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Starts the three containers of `image` and resolves once each answers /health/ready with 200. */
export async function startDeployment(
  image: string,
  services: { databaseUrl: string; redisUrl: string },
  auth: { jwks: object; issuer: string; audience: string },
  cleanup: Cleanup,
): Promise<Deployment> {
  const work = mkdtempSync('/var/tmp/bank-subgraph-image-test-');
  cleanup(() => rmSync(work, { recursive: true, force: true }));
  // Readable by the container's uid 1000, as a mounted Secret or ConfigMap would be.
  const authDir = join(work, 'auth');
  mkdirSync(authDir);
  writeFileSync(join(authDir, 'jwks.json'), JSON.stringify(auth.jwks));
  chmodSync(work, 0o755);
  chmodSync(authDir, 0o755);
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  chownSync(dataDir, 1000, 1000);

  const hosts = { a: '127.0.0.2', b: '127.0.0.3', sqlite: '127.0.0.4' };
  const port = await freePortOn(Object.values(hosts));
  const webhookPort = await freePortOn(Object.values(hosts));
  const webhook = { clientId: 'image-test-client', secret: randomBytes(24).toString('hex') };
  const storeUrl = await isolatedSchema(services.databaseUrl, cleanup);
  const suffix = randomBytes(4).toString('hex');
  const common = {
    UPSTREAM_MODE: 'sandbox',
    PORT: String(port),
    WEBHOOK_PORT: String(webhookPort),
    AUTH_JWKS_URL: 'file:/etc/bank-subgraph/auth/jwks.json',
    AUTH_ISSUER: auth.issuer,
    AUTH_AUDIENCE: auth.audience,
    WEBHOOK_CLIENT_ID: webhook.clientId,
    WEBHOOK_CLIENT_SECRET: webhook.secret,
    // The test's deliveries, direct or through the balancer, come from loopback.
    WEBHOOK_ALLOWED_IPS: '127.0.0.0/8',
  };
  const authVolume = `${authDir}:/etc/bank-subgraph/auth:ro`;
  const specs = {
    a: { env: { ...common, HOST: hosts.a, STORE_URL: storeUrl, PUBSUB_URL: services.redisUrl }, volumes: [authVolume] },
    b: { env: { ...common, HOST: hosts.b, STORE_URL: storeUrl, PUBSUB_URL: services.redisUrl }, volumes: [authVolume] },
    // The image's defaults: SQLite under /app/data, in-process pub/sub.
    sqlite: { env: { ...common, HOST: hosts.sqlite }, volumes: [authVolume, `${dataDir}:/app/data`] },
  };
  const replicas = {} as Deployment['replicas'];
  for (const [key, spec] of Object.entries(specs) as [keyof typeof hosts, (typeof specs)['a']][]) {
    const name = `bank-subgraph-image-test-${suffix}-${key}`;
    cleanup(() => removeContainer(name));
    await startContainer({ name, image, ...spec });
    const host = hosts[key];
    replicas[key] = { name, host, graphqlBase: `http://${host}:${port}`, webhookBase: `http://${host}:${webhookPort}` };
  }
  await Promise.all(
    Object.values(replicas).map((replica) =>
      waitUntil(
        `${replica.name} ready`,
        async () => ((await statusOf(`${replica.webhookBase}/health/ready`)) === 200 ? true : undefined),
        60_000,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await containerLogs(replica.name)}`);
      }),
    ),
  );
  return { replicas, port, webhookPort, webhook, dataDir };
}

// `npm run test:image`: builds the production image from the Dockerfile and runs it the way an
// orchestrator does (read-only root filesystem, no capabilities, NODE_ENV=production), on this
// machine's PostgreSQL and Redis, through compose's balancer where Caddy is installed, then checks
// what operators rely on: ready, a query, a webhook 00, a subscriber on another replica receiving it,
// and SIGTERM draining to exit 0. Needs podman, runc and debootstrap (Debian's packages) and root;
// the base image is a stand-in built from Debian's packages (image/standin-base.ts), as no registry
// is reached here. Progress on stdout; exits 1 on any failure, with the containers' logs.
import { resolve } from 'node:path';
import { startBalancer } from './image/balancer.ts';
import { runChecks } from './image/checks.ts';
import { installed, run } from './image/commands.ts';
import { checkImageContents } from './image/contents.ts';
import { buildImage, imageId, inspectImage, podman } from './image/podman.ts';
import { freePortOn, startDeployment, type Cleanup } from './image/replicas.ts';
import { ensureStandInBase } from './image/standin-base.ts';
import { createIssuer } from './image/subgraph-client.ts';

const REPOSITORY = resolve(import.meta.dirname, '..');
const IMAGE = 'localhost/bank-subgraph:image-test';
/** The dependency stage, tagged so the build cache it holds is kept and a stale one can be removed. */
const DEPENDENCIES_IMAGE = 'localhost/bank-subgraph:image-test-dependencies';
const started = performance.now();

function progress(line: string): void {
  console.log(`test:image [${((performance.now() - started) / 1000).toFixed(1)} s] ${line}`);
}

async function main(cleanup: Cleanup): Promise<void> {
  const missing = [];
  for (const tool of ['podman', 'runc', 'debootstrap']) if (!(await installed(tool))) missing.push(tool);
  if (missing.length > 0) throw new Error(`${missing.join(', ')} not installed: apt-get install podman runc debootstrap`);

  progress('stand-in for node:24-bookworm-slim');
  const base = await ensureStandInBase(progress);
  // npm in the build asks the registry the host's npm asks.
  const buildArgs = { NODE_IMAGE: base, NPM_CONFIG_REGISTRY: (await run('npm', ['config', 'get', 'registry'])).stdout.trim() };
  progress(`building the Dockerfile with NODE_IMAGE=${base}`);
  await replaceImage(DEPENDENCIES_IMAGE, () => buildImage(REPOSITORY, DEPENDENCIES_IMAGE, buildArgs, 'dependencies'));
  await replaceImage(IMAGE, () => buildImage(REPOSITORY, IMAGE, buildArgs));
  const [size, baseSize] = [(await inspectImage(IMAGE)).Size, (await inspectImage(base)).Size];
  progress(`image ${IMAGE}: ${mb(size)} (the base ${mb(baseSize)}, the subgraph's layers ${mb(size - baseSize)})`);

  for (const verdict of await checkImageContents(IMAGE, REPOSITORY)) progress(`image: ${verdict}`);

  const issuer = 'https://issuer.image-test.invalid';
  const audience = 'bank-subgraph';
  const tokens = await createIssuer(issuer, audience);
  progress('starting two replicas on PostgreSQL and Redis and one on SQLite, read-only, NODE_ENV=production');
  const deployment = await startDeployment(
    IMAGE,
    {
      databaseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
      redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
    },
    { jwks: tokens.jwks, issuer, audience },
    cleanup,
  );
  progress('all three ready');
  const balancer = await startBalancer(REPOSITORY, deployment, await balancerPorts(), cleanup);
  progress(
    balancer
      ? 'the compose balancer (Caddy, deploy/compose/Caddyfile) in front of both PostgreSQL replicas'
      : 'no caddy on this machine: the compose balancer is not run',
  );
  await runChecks({ deployment, balancer, token: await tokens.sign('collections:read:all'), progress });
  progress('passed');
}

/** Builds `tag` anew; the image it named before goes once replaced (layers the build reused stay). */
async function replaceImage(tag: string, build: () => Promise<unknown>): Promise<void> {
  const previous = await imageId(tag);
  await build();
  if (previous && previous !== (await imageId(tag))) await podman(['rmi', previous], { allowFailure: true });
}

/** Two ports for the balancer, free on loopback. */
async function balancerPorts(): Promise<{ graphql: number; webhook: number }> {
  const graphql = await freePortOn(['127.0.0.1']);
  let webhook = await freePortOn(['127.0.0.1']);
  while (webhook === graphql) webhook = await freePortOn(['127.0.0.1']);
  return { graphql, webhook };
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

const undo: (() => unknown)[] = [];
async function cleanUp(): Promise<void> {
  // Popped one at a time, so a step registered while cleaning up (an interrupted start) is undone too.
  for (let step = undo.pop(); step; step = undo.pop()) {
    try {
      await step();
    } catch (error) {
      console.error(`test:image: cleaning up: ${(error as Error).message}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}

let code = 0;
try {
  await main((step) => undo.push(step));
} catch (error) {
  console.error(
    `test:image: FAILED after ${((performance.now() - started) / 1000).toFixed(1)} s: ${error instanceof Error ? error.message : String(error)}`,
  );
  code = 1;
} finally {
  await cleanUp();
}
process.exit(code);

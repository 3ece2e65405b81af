import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config/index.ts';
import { readsAsPlaceholder, SECRET_VARIABLES } from '../src/config/secrets.ts';
import { HEALTH_PATHS } from '../src/server/health.ts';
import { SHUTDOWN_BUDGET_MS } from '../src/shutdown.ts';
import { startApp } from './helpers/app.ts';
import { problemsOf } from './helpers/config.ts';
import { unusedUrl } from './helpers/fake-bank.ts';
import {
  caddyfileAtDefaults,
  composeFile,
  ComposeVariablesMissing,
  composeText,
  dockerfileInstructions,
  documentedSecretKeys,
  durationSeconds,
  kubernetesObject,
  kubernetesObjects,
  readRepoFile,
  ROOT,
  type ComposeService,
} from './helpers/manifests.ts';

// What operators apply is held to what the code serves: a renamed route, a moved port or a longer
// drain fails here, not in a deployment. `npm run test:image` builds and runs the image itself.

const HEALTH = HEALTH_PATHS;
const DRAIN_SECONDS = SHUTDOWN_BUDGET_MS / 1000;
const DEFAULTS = loadConfig({});
const packageJson = JSON.parse(readRepoFile('package.json')) as {
  scripts: Record<string, string>;
  engines: { node: string };
  devDependencies: Record<string, string>;
};

const dockerfile = dockerfileInstructions(readRepoFile('Dockerfile'));
const instructions = (keyword: string) => dockerfile.filter((each) => each.keyword === keyword).map((each) => each.args);
/** The last stage's instructions: what the image runs. */
const runtimeStage = dockerfile.slice(dockerfile.map((each) => each.keyword).lastIndexOf('FROM'));
const imageUser = runtimeStage.filter((each) => each.keyword === 'USER').at(-1)?.args ?? '';

describe('Dockerfile', () => {
  it('takes every base from NODE_IMAGE (node:24-bookworm-slim) or RUNTIME_IMAGE, which defaults to it', () => {
    const args = instructions('ARG');
    expect(args).toContain('NODE_IMAGE=node:24-bookworm-slim');
    expect(args).toContain('RUNTIME_IMAGE=${NODE_IMAGE}');
    for (const from of instructions('FROM')) expect(from).toMatch(/^\$\{(NODE_IMAGE|RUNTIME_IMAGE)\}( AS \w+)?$/);
    expect(runtimeStage[0]!.args).toBe('${RUNTIME_IMAGE}');
  });

  it('pins the Node major the project runs on', () => {
    const major = /node:(\d+)-/.exec(instructions('ARG').find((arg) => arg.startsWith('NODE_IMAGE='))!)![1];
    expect(packageJson.engines.node).toBe(`>=${major}`);
    expect(packageJson.devDependencies.node).toMatch(new RegExp(`^\\^${major}\\.`));
  });

  it('installs production dependencies only, and runs no install script', () => {
    const installs = instructions('RUN').filter((run) => run.includes('npm ci'));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(instructions('RUN').join('\n')).not.toMatch(/npm (install|i) /);
  });

  it('starts the entry `npm start` runs with node as PID 1, as a numeric non-root user', () => {
    const cmd = JSON.parse(runtimeStage.find((each) => each.keyword === 'CMD')!.args) as string[];
    expect(cmd.join(' ')).toBe(packageJson.scripts.start);
    expect(cmd[0]).toBe('node');
    // Cleared, so no base's entrypoint script runs in between.
    expect(runtimeStage.filter((each) => each.keyword === 'ENTRYPOINT').map((each) => each.args)).toEqual(['[]']);
    expect(imageUser).toMatch(/^\d+:\d+$/);
    expect(Number(imageUser.split(':')[0])).toBeGreaterThan(0);
    expect(instructions('STOPSIGNAL')).toEqual(['SIGTERM']);
  });

  it('gives the SQLite default a volume of its own and exposes PORT', () => {
    const workdir = runtimeStage.find((each) => each.keyword === 'WORKDIR')!.args;
    const sqliteDir = /^sqlite:\.\/([^/]+)\//.exec(DEFAULTS.storeUrl.reveal())![1];
    expect(JSON.parse(instructions('VOLUME')[0]!)).toEqual([`${workdir}/${sqliteDir}`]);
    expect(instructions('EXPOSE')).toEqual([String(DEFAULTS.port)]);
    expect(runtimeStage.map((each) => `${each.keyword} ${each.args}`)).toContain('ENV NODE_ENV=production');
  });

  it('lets into the build only what the image copies, never .env, dev/ or tests', () => {
    const patterns = readRepoFile('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(patterns[0]).toBe('*');
    const allowed = patterns.filter((pattern) => pattern.startsWith('!')).map((pattern) => pattern.slice(1).replace(/\/$/, ''));
    expect(allowed.sort()).toEqual(['package-lock.json', 'package.json', 'schema', 'src']);
    expect(patterns).toContain('src/**/*.test.ts');
    const copied = instructions('COPY')
      .filter((copy) => !copy.startsWith('--'))
      .flatMap((copy) => copy.split(' ').slice(0, -1));
    expect([...new Set(copied)].sort()).toEqual(allowed.sort());
  });
});

/** What an operator's `.env` beside compose.yaml gives it: every secret, chosen by them. */
const OPERATOR_ENV = {
  POSTGRES_PASSWORD: 'Zq8vN3rT6wY1bH4jK7mP',
  BANK_BASE_URL: 'https://api.bank.test/gw',
  BANK_BILLING_URL: 'https://bills.bank.test/provipay/webapi',
  BANK_POSTING_URL: 'https://post.bank.test/postingrest',
  BANK_WALLET_URL: 'https://wallet.bank.test/api',
  BANK_COLLECTION_URL: 'https://collect.bank.test/vps/api',
  BANK_API_TOKEN: 'tok-4f1c9a7e2b6d',
  BANK_USERNAME: 'partner-0421',
  BANK_PASSWORD: 'pw-8b3e1f6a9c2d',
  BILLING_USERNAME: 'biller-0421',
  BILLING_PASSWORD: 'pw-2c7d4e9f1a6b',
  POSTING_USERNAME: 'poster-0421',
  POSTING_PASSWORD: 'pw-6a1b8c3d5e7f',
  OAUTH_CLIENT_ID: 'client-0421',
  OAUTH_CLIENT_SECRET: 'oauth-5d9e2f7a1b4c',
  WEBHOOK_CLIENT_ID: 'collector-0421',
  WEBHOOK_CLIENT_SECRET: 'hook-3f8a1c6e9b2d7f40',
  WEBHOOK_ALLOWED_IPS: '203.0.113.10,198.51.100.0/24',
  AUTH_JWKS_URL: 'https://issuer.bank.test/.well-known/jwks.json',
  AUTH_ISSUER: 'https://issuer.bank.test/',
};
/** What compose.yaml writes: its variables as written, not yet interpolated. */
const composeAsWritten = composeText();
const compose = composeFile(OPERATOR_ENV);
const replicas = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
const replicaEnv = replicas[0]![1].environment!;
/** A published port, `address:port:container`, in its parts. */
const published = (mapping: string) => {
  const [address, port, container] = mapping.split(':');
  return { address, port, container };
};

/** The port and path a compose health check asks for. */
function healthcheckTarget(service: ComposeService): { port: number; path: string } {
  const url = /https?:\/\/127\.0\.0\.1:(\d+)(\/[^'")\s]*)/.exec(service.healthcheck!.test.join(' '))!;
  return { port: Number(url[1]), path: url[2]! };
}

describe('compose.yaml', () => {
  it('runs two replicas of the image this Dockerfile builds', () => {
    expect(replicas.map(([name]) => name)).toEqual(['subgraph-1', 'subgraph-2']);
    const withoutPorts = ({ ports: _ports, ...service }: ComposeService) => service;
    for (const [, service] of replicas) {
      expect(withoutPorts(service)).toEqual(withoutPorts(replicas[0]![1]));
      expect(service.build!.context).toBe('.');
      expect(service.build!.args!.NODE_IMAGE).toBe('node:24-bookworm-slim');
    }
  });

  it('configures them for production, as the subgraph accepts, the webhook on a port of its own', () => {
    expect(replicaEnv.NODE_ENV).toBe('production');
    expect(problemsOf(replicaEnv)).toEqual([]);
    const config = loadConfig(replicaEnv);
    expect(config.sandboxRules).toBe(false);
    expect(config.upstream.mode).toBe('live');
    expect(config.webhookAllowedSources).toHaveLength(2);
    expect(config.webhookPort).toBeDefined();
    expect(config.webhookPort).not.toBe(config.port);
  });

  it('writes no secret: each comes from the environment as ${NAME:?…}, and compose refuses to start without it', () => {
    const written = composeAsWritten.services['subgraph-1']!.environment!;
    // Only during a rotation, or when chosen: empty is unset, never a value.
    const optional = new Set(['WEBHOOK_CLIENT_SECRET_PREVIOUS', 'ROUTER_SECRET']);
    for (const name of SECRET_VARIABLES) {
      expect(written[name], name).toMatch(
        optional.has(name) ? new RegExp(`^\\$\\{${name}:-\\}$`) : new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`),
      );
    }
    expect(written.STORE_URL).toContain('${POSTGRES_PASSWORD:?');
    expect(composeAsWritten.services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/);
    // Nothing else gives a secret a default either, nor reads as one left from a template.
    for (const [, name, fallback] of readRepoFile('compose.yaml').matchAll(/\$\{([A-Z0-9_]+):?-([^}]*)\}/g)) {
      if ((SECRET_VARIABLES as readonly string[]).includes(name!) || /PASSWORD|SECRET|TOKEN/.test(name!)) expect(fallback, name).toBe('');
      expect(readsAsPlaceholder(fallback!) && fallback !== '', `${name}'s default`).toBe(false);
    }
    for (const file of [
      'compose.yaml',
      'deploy/compose/Caddyfile',
      ...kubernetesObjects().map(({ file: name }) => `deploy/kubernetes/${name}`),
    ]) {
      expect(readRepoFile(file), file).not.toMatch(/replace[-_ ]?me/i);
    }
    expect(() => composeFile({})).toThrow(ComposeVariablesMissing);
    const { POSTGRES_PASSWORD: _p, WEBHOOK_CLIENT_SECRET: _s, WEBHOOK_ALLOWED_IPS: _a, ...partial } = OPERATOR_ENV;
    expect(() => composeFile(partial)).toThrow(
      expect.objectContaining({ names: ['POSTGRES_PASSWORD', 'WEBHOOK_CLIENT_SECRET', 'WEBHOOK_ALLOWED_IPS'] }),
    );
  });

  it('publishes only the balancer, on addresses the operator chooses (loopback until then), and each replica to this host alone', () => {
    const { balancer } = compose.services;
    for (const [name, service] of Object.entries(compose.services)) {
      if (name === 'balancer' || service.build !== undefined) continue;
      expect(service.ports, name).toBeUndefined();
    }
    const chosen = composeAsWritten.services.balancer!.ports!.map((mapping) => /^\$\{([A-Z_]+_ADDRESS):-([^}]*)\}:/.exec(mapping));
    expect(chosen.map((match) => match?.[2])).toEqual(['127.0.0.1', '127.0.0.1']);
    expect(balancer!.ports!.map((mapping) => published(mapping).address)).toEqual(['127.0.0.1', '127.0.0.1']);
    expect(
      composeFile({ ...OPERATOR_ENV, WEBHOOK_PUBLISHED_ADDRESS: '198.51.100.7' }).services.balancer!.ports!.map(
        (mapping) => published(mapping).address,
      ),
    ).toEqual(['127.0.0.1', '198.51.100.7']);
    // Each replica's PORT (/graphql and /metrics) on loopback, for a Prometheus on this host.
    for (const [name, service] of replicas) {
      expect(service.ports!.map(published), name).toEqual([
        { address: '127.0.0.1', port: expect.stringMatching(/^\d+$/), container: replicaEnv.PORT },
      ]);
    }
    expect(new Set(replicas.map(([, service]) => published(service.ports![0]!).port)).size).toBe(replicas.length);
  });

  it('checks readiness on the port that serves it, and stops within a grace period above the drain', () => {
    for (const [, service] of replicas) {
      expect(healthcheckTarget(service)).toEqual({ port: Number(replicaEnv.WEBHOOK_PORT), path: HEALTH.ready });
      expect(durationSeconds(service.stop_grace_period!)).toBeGreaterThan(DRAIN_SECONDS);
      expect(service.read_only).toBe(true);
      expect(service.tmpfs).toEqual(['/tmp']);
      expect(service.cap_drop).toEqual(['ALL']);
      expect(service.security_opt).toContain('no-new-privileges:true');
      expect(service.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    }
  });

  it('points the replicas at its PostgreSQL and Redis, each with a health check', () => {
    const { postgres, redis } = compose.services;
    const store = new URL(replicaEnv.STORE_URL!);
    expect(store.hostname).toBe('postgres');
    expect([store.username, store.password, store.pathname]).toEqual([
      postgres!.environment!.POSTGRES_USER,
      postgres!.environment!.POSTGRES_PASSWORD,
      `/${postgres!.environment!.POSTGRES_DB}`,
    ]);
    expect(new URL(replicaEnv.PUBSUB_URL!).hostname).toBe('redis');
    expect(postgres!.healthcheck).toBeDefined();
    expect(redis!.healthcheck).toBeDefined();
  });

  it('balances /graphql (and nothing else of PORT: not /metrics) and the webhook over both replicas by their readiness', () => {
    const balancer = compose.services.balancer!;
    const [port, webhookPort] = [replicaEnv.PORT, replicaEnv.WEBHOOK_PORT];
    expect(balancer.ports!.map((mapping) => published(mapping).container)).toEqual([port, webhookPort]);
    const mounted = balancer.volumes!.find((volume) => volume.includes('/etc/caddy/Caddyfile'))!.split(':')[0]!;
    expect(existsSync(join(ROOT, mounted))).toBe(true);
    const caddyfile = caddyfileAtDefaults()
      .split('\n')
      .filter((line) => !/^\s*#/.test(line))
      .join('\n');
    const upstreams = (listen: string) => replicas.map(([name]) => `${name}:${listen}`).join(' ');
    expect(caddyfile).toContain(
      `:${port} {\n\thandle /graphql {\n\t\treverse_proxy ${upstreams(port!)} {\n\t\t\timport replicas\n\t\t}\n\t}\n\thandle {\n\t\trespond 404\n\t}\n}`,
    );
    expect(caddyfile).toContain(`:${webhookPort} {\n\treverse_proxy ${upstreams(webhookPort!)} {\n\t\timport replicas`);
    expect(caddyfile).toMatch(new RegExp(`health_uri ${HEALTH.ready}\\n\\thealth_port ${webhookPort}\\n`));
  });
});

const deployment = kubernetesObject('Deployment');
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const configMap = kubernetesObject('ConfigMap');
const containerPort = (name: string | number) =>
  typeof name === 'number' ? name : container.ports.find((port: { name: string }) => port.name === name).containerPort;
const probes = { startupProbe: HEALTH.live, livenessProbe: HEALTH.live, readinessProbe: HEALTH.ready };

describe('deploy/kubernetes', () => {
  it('applies every manifest in the directory through its kustomization', () => {
    const kustomization = parse(readRepoFile('deploy/kubernetes/kustomization.yaml')) as {
      resources: string[];
      images: { name: string }[];
    };
    expect(kustomization.resources.sort()).toEqual([...new Set(kubernetesObjects().map(({ file }) => file))].sort());
    expect(kustomization.images.map((image) => image.name)).toEqual([container.image]);
  });

  it('probes /health/* on the port that serves it: the webhook port, once WEBHOOK_PORT is set', () => {
    expect(containerPort('http')).toBe(Number(configMap.data.PORT));
    expect(containerPort('webhook')).toBe(Number(configMap.data.WEBHOOK_PORT));
    for (const [probe, path] of Object.entries(probes)) {
      expect(container[probe].httpGet.path, probe).toBe(path);
      expect(containerPort(container[probe].httpGet.port), probe).toBe(Number(configMap.data.WEBHOOK_PORT));
    }
  });

  it('pauses before SIGTERM, and gives the pause and the drain a grace period that never cuts it', () => {
    const pause = container.lifecycle.preStop.sleep.seconds as number;
    expect(pause).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(pause + DRAIN_SECONDS);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('runs as the image user, non-root, read-only, with no privilege escalation and every capability dropped', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(`${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`).toBe(imageUser);
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const tmp = container.volumeMounts.find((mount: { mountPath: string }) => mount.mountPath === '/tmp');
    expect(pod.volumes.find((volume: { name: string }) => volume.name === tmp.name).emptyDir).toBeDefined();
    for (const kind of ['requests', 'limits']) expect(Object.keys(container.resources[kind]).sort(), kind).toEqual(['cpu', 'memory']);
  });

  it('serves /graphql and the webhook through a Service each, and evicts one replica at a time', () => {
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    const targets = Object.fromEntries(
      kubernetesObjects()
        .filter(({ object }) => object.kind === 'Service')
        .map(({ object }) => [object.metadata.name, object]),
    );
    expect(Object.keys(targets).sort()).toEqual(['bank-subgraph', 'bank-subgraph-webhook']);
    expect(targets['bank-subgraph']!.spec.ports.map((port: { targetPort: string }) => port.targetPort)).toEqual(['http']);
    expect(targets['bank-subgraph-webhook']!.spec.ports.map((port: { targetPort: string }) => port.targetPort)).toEqual(['webhook']);
    for (const service of Object.values(targets)) expect(service.spec.selector).toEqual(labels);
    const budget = kubernetesObject('PodDisruptionBudget');
    expect(budget.spec.selector.matchLabels).toEqual(labels);
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(budget.spec.maxUnavailable).toBe(1);
  });

  it('takes settings from the ConfigMap and secrets from a Secret it names and never ships', () => {
    expect(container.envFrom).toEqual([
      { configMapRef: { name: configMap.metadata.name } },
      { secretRef: { name: 'bank-subgraph-secrets' } },
    ]);
    expect(kubernetesObjects().filter(({ object }) => object.kind === 'Secret')).toEqual([]);
    const secretKeys = documentedSecretKeys();
    expect(secretKeys).toEqual(expect.arrayContaining(['STORE_URL', 'WEBHOOK_CLIENT_SECRET']));
    for (const key of Object.keys(configMap.data)) {
      expect(secretKeys, key).not.toContain(key);
      expect(key).not.toMatch(/SECRET|PASSWORD|TOKEN/);
    }
    // The ConfigMap with the documented Secret, filled in, is a production configuration the subgraph accepts.
    const secrets = Object.fromEntries(
      secretKeys.map((key) => [
        key,
        key === 'STORE_URL'
          ? 'postgres://bank:pw@db:5432/bank'
          : key === 'PUBSUB_URL'
            ? 'redis://cache:6379'
            : `${key.toLowerCase()}-7f3a9c2e5b1d`,
      ]),
    );
    expect(problemsOf({ ...configMap.data, ...secrets })).toEqual([]);
    const config = loadConfig({ ...configMap.data, ...secrets });
    expect(config.sandboxRules).toBe(false);
    // The bank's addresses are a setting of the ConfigMap, not a comment.
    expect(configMap.data.WEBHOOK_ALLOWED_IPS).toBeDefined();
    expect(config.webhookAllowedSources?.length).toBeGreaterThan(0);
  });

  it('runs as a ServiceAccount of its own, with no token mounted', () => {
    const account = kubernetesObject('ServiceAccount');
    expect(account.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe(account.metadata.name);
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('admits the webhook port from the ingress alone, and PORT from the router and monitoring alone', () => {
    const policy = kubernetesObject('NetworkPolicy');
    expect(policy.spec.podSelector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    const rules = policy.spec.ingress as {
      from?: { namespaceSelector?: { matchLabels?: object }; podSelector?: { matchLabels?: object } }[];
      ports?: { port: string | number }[];
    }[];
    for (const rule of rules) {
      // Every rule names who, by namespace and pod: none admits every source, or every port.
      expect(rule.from?.length).toBeGreaterThan(0);
      for (const peer of rule.from!) {
        expect(Object.keys(peer.namespaceSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
        expect(Object.keys(peer.podSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
      }
      expect(rule.ports?.length).toBeGreaterThan(0);
    }
    // By the container's port names, so they follow PORT and WEBHOOK_PORT.
    const admitted = rules.map((rule) => rule.ports!.map((port) => containerPort(port.port)));
    expect(admitted).toEqual([[Number(configMap.data.WEBHOOK_PORT)], [Number(configMap.data.PORT)], [Number(configMap.data.PORT)]]);
    const peers = rules.map((rule) => JSON.stringify(rule.from));
    expect(new Set(peers).size).toBe(3);
  });
});

describe('every probe and health check', () => {
  it('gets 200 from the subgraph at the path and port it names', async () => {
    const webhookPort = Number(new URL(await unusedUrl()).port);
    const { baseUrl } = await startApp({ WEBHOOK_PORT: String(webhookPort) });
    const port = Number(new URL(baseUrl).port);
    // The deployments' ports, as this process serves them.
    const served = (deployed: number) =>
      ({
        [configMap.data.PORT]: port,
        [configMap.data.WEBHOOK_PORT]: webhookPort,
        [replicaEnv.PORT!]: port,
        [replicaEnv.WEBHOOK_PORT!]: webhookPort,
      })[deployed];
    const targets = [
      ...Object.keys(probes).map((probe) => ({
        what: `kubernetes ${probe}`,
        port: containerPort(container[probe].httpGet.port),
        path: container[probe].httpGet.path as string,
      })),
      { what: 'compose health check', ...healthcheckTarget(replicas[0]![1]) },
      {
        what: 'the balancer health check',
        port: Number(/health_port (\d+)/.exec(caddyfileAtDefaults())![1]),
        path: /health_uri (\S+)/.exec(caddyfileAtDefaults())![1]!,
      },
    ];
    for (const target of targets) {
      const response = await fetch(`http://127.0.0.1:${served(target.port)}${target.path}`);
      expect(response.status, `${target.what}: GET ${target.path} on ${target.port}`).toBe(200);
    }
  });
});

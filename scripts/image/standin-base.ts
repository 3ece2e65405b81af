// A stand-in for node:24-bookworm-slim, for a machine that reaches Debian's packages and the npm
// registry but no container registry: Debian bookworm (minbase) from the mirror apt uses, the Node 24
// binary `npm ci` brought, npm from the npm registry, the `node` user (uid 1000) the official image
// has, and this machine's trusted certificates, so npm inside a build reaches the registry as the
// host does. Built once and kept in podman's storage under a tag that hashes every input.
// On its own, as root: `npx node scripts/image/standin-base.ts` builds it (once) and prints its
// reference, to pass as `--build-arg NODE_IMAGE=…`.
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { run } from './commands.ts';
import { imageExists, podman } from './podman.ts';

const REPOSITORY = 'localhost/bank-subgraph-node-standin';
const NODE_BINARY = resolve(import.meta.dirname, '..', '..', 'node_modules', 'node', 'bin', 'node');
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** Where the slim image has no use for files: documentation, manuals, translations, apt's caches. */
const TRIMMED = ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'var/cache/apt', 'var/lib/apt/lists'];

/** The stand-in's reference, built first when podman does not hold it yet. `progress` hears each long step. */
export async function ensureStandInBase(progress: (line: string) => void): Promise<string> {
  const inputs = await standInInputs();
  const reference = `${REPOSITORY}:${inputs.nodeVersion.slice(1)}-${inputs.hash}`;
  if (await imageExists(reference)) return reference;
  progress(`building the stand-in base ${reference} (debootstrap from ${inputs.mirror}; once per change of its inputs)`);
  const work = mkdtempSync('/var/tmp/bank-subgraph-standin-');
  try {
    const root = join(work, 'root');
    await run('debootstrap', ['--variant=minbase', 'bookworm', root, inputs.mirror]);
    for (const path of TRIMMED) rmSync(join(root, path), { recursive: true, force: true });
    installNode(root);
    await installNpm(root, work, inputs.npmVersion);
    installEntrypoint(root);
    addNodeUser(root);
    mkdirSync(join(root, 'etc/ssl/certs'), { recursive: true });
    copyFileSync(CA_BUNDLE, join(root, 'etc/ssl/certs/ca-certificates.crt'));
    await importRoot(root, reference);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  await removeOtherStandIns(reference);
  return reference;
}

interface StandInInputs {
  mirror: string;
  nodeVersion: string;
  npmVersion: string;
  hash: string;
}

/** Everything the stand-in is made of; a change to any (this recipe included) makes a new tag. */
async function standInInputs(): Promise<StandInInputs> {
  if (!existsSync(NODE_BINARY)) throw new Error(`${NODE_BINARY} is missing: run npm ci first (the node devDependency brings it)`);
  const mirror = process.env.DEBIAN_MIRROR || debianMirror();
  const nodeVersion = (await run(NODE_BINARY, ['--version'])).stdout.trim();
  const npmVersion = (await run('npm', ['--version'])).stdout.trim();
  const hash = createHash('sha256');
  for (const part of [mirror, nodeVersion, npmVersion, readFileSync(CA_BUNDLE), readFileSync(import.meta.filename)])
    hash.update(part).update('\0');
  return { mirror, nodeVersion, npmVersion, hash: hash.digest('hex').slice(0, 12) };
}

/** The Debian mirror apt is configured with for bookworm (deb822 `.sources` or a `sources.list` line). */
function debianMirror(): string {
  const files = ['/etc/apt/sources.list', ...listDirectory('/etc/apt/sources.list.d').map((name) => join('/etc/apt/sources.list.d', name))];
  for (const file of files.filter((name) => /\.(list|sources)$/.test(name) && existsSync(name))) {
    const text = readFileSync(file, 'utf8');
    const line = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/m.exec(text);
    if (line) return line[1]!;
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      if (uri && /^Suites:.*\bbookworm(\s|$)/m.test(stanza) && /^Types:.*\bdeb\b/m.test(stanza)) return uri;
    }
  }
  throw new Error('no Debian bookworm mirror found in apt sources: set DEBIAN_MIRROR');
}

function listDirectory(path: string): string[] {
  return existsSync(path) ? readdirSync(path) : [];
}

function installNode(root: string): void {
  const target = join(root, 'usr/local/bin/node');
  mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
  copyFileSync(NODE_BINARY, target);
  chmodSync(target, 0o755);
}

/**
 * The official image's entrypoint, so a Dockerfile that inherited it would be tested as it runs
 * there: a command that is not a program on the PATH is handed to node, anything else run as given.
 */
const ENTRYPOINT_SCRIPT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
`;

function installEntrypoint(root: string): void {
  const target = join(root, 'usr/local/bin/docker-entrypoint.sh');
  writeFileSync(target, ENTRYPOINT_SCRIPT);
  chmodSync(target, 0o755);
}

/** npm from the npm registry, laid out as Node's own installer lays it out. */
async function installNpm(root: string, work: string, version: string): Promise<void> {
  const { stdout } = await run('npm', ['pack', `npm@${version}`, '--pack-destination', work, '--silent']);
  const npmDir = join(root, 'usr/local/lib/node_modules/npm');
  mkdirSync(npmDir, { recursive: true });
  await run('tar', ['-xzf', join(work, stdout.trim().split('\n').pop()!), '-C', npmDir, '--strip-components=1', '--no-same-owner']);
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'usr/local/bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(root, 'usr/local/bin/npx'));
}

/** The official image's `node` user and group, uid and gid 1000, with a home. */
function addNodeUser(root: string): void {
  appendFileSync(join(root, 'etc/group'), 'node:x:1000:\n');
  appendFileSync(join(root, 'etc/passwd'), 'node:x:1000:1000::/home/node:/bin/bash\n');
  appendFileSync(join(root, 'etc/shadow'), 'node:*:19000:0:99999:7:::\n');
  mkdirSync(join(root, 'home/node'), { recursive: true });
  chownSync(join(root, 'home/node'), 1000, 1000);
}

/** The root filesystem as an image, with the official image's PATH, entrypoint and command. */
async function importRoot(root: string, reference: string): Promise<void> {
  const tar = spawn('tar', ['-C', root, '--numeric-owner', '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const tarred = once(tar, 'close');
  await podman(
    [
      'import',
      '--change',
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change',
      `ENV NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`,
      '--change',
      'ENTRYPOINT ["docker-entrypoint.sh"]',
      '--change',
      'CMD ["node"]',
      '-',
      reference,
    ],
    { input: tar.stdout },
  );
  const [code] = (await tarred) as [number | null];
  if (code !== 0) throw new Error(`tar of the stand-in's root filesystem exited ${code}`);
}

/** Older stand-ins (other inputs) go, so podman's storage holds one. */
async function removeOtherStandIns(keep: string): Promise<void> {
  const { stdout } = await podman(['images', '--format', '{{.Repository}}:{{.Tag}}', REPOSITORY]);
  for (const reference of stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== keep)) {
    await podman(['rmi', reference], { allowFailure: true });
  }
}

if (import.meta.main) {
  console.log(await ensureStandInBase((line) => console.error(line)));
}

// podman as the image test drives it on a machine without a Docker daemon or a registry.
import type { Readable } from 'node:stream';
import { run, type CommandResult } from './commands.ts';

/**
 * Flags every podman call here takes, and why: runc is the OCI runtime Debian's podman works with on
 * this kind of machine; podman's default open-files and process limits exceed the machine's hard
 * limits, so containers would fail to start without explicit ones; and the host network is the only
 * one here (no bridge), which is also how containers reach the machine's PostgreSQL and Redis.
 */
const GLOBAL_FLAGS = ['--runtime', 'runc'];
const LIMIT_FLAGS = ['--ulimit', 'nofile=16384:16384', '--ulimit', 'nproc=4096:4096'];
const NETWORK_FLAGS = ['--network', 'host'];

/** `podman <args>` with the global flags. */
export function podman(args: readonly string[], options: { input?: Readable; allowFailure?: boolean } = {}): Promise<CommandResult> {
  return run('podman', [...GLOBAL_FLAGS, ...args], options);
}

export async function imageExists(reference: string): Promise<boolean> {
  return (await podman(['image', 'exists', reference], { allowFailure: true })).code === 0;
}

/** The image's id, or undefined when there is none by that name. */
export async function imageId(reference: string): Promise<string | undefined> {
  const { code, stdout } = await podman(['image', 'inspect', '--format', '{{.Id}}', reference], { allowFailure: true });
  return code === 0 ? stdout.trim() : undefined;
}

/** What `podman image inspect` says of the image (its config and size). */
export async function inspectImage(
  reference: string,
): Promise<{ Size: number; Config: { User?: string; Cmd?: string[]; Entrypoint?: string[] | null; Env?: string[] } }> {
  const { stdout } = await podman(['image', 'inspect', reference]);
  return (JSON.parse(stdout) as [never])[0];
}

/** Builds `context`'s Dockerfile (up to the stage `target`, when given) into `tag`. */
export function buildImage(context: string, tag: string, buildArgs: Record<string, string>, target?: string): Promise<CommandResult> {
  const args = Object.entries(buildArgs).flatMap(([name, value]) => ['--build-arg', `${name}=${value}`]);
  return podman(['build', ...LIMIT_FLAGS, ...NETWORK_FLAGS, ...args, ...(target ? ['--target', target] : []), '--tag', tag, context]);
}

/** Runs `command` in a fresh container of `image` and resolves with what it printed (the container is removed). */
export async function runOnce(image: string, command: readonly string[]): Promise<string> {
  const { stdout } = await podman(['run', '--rm', ...LIMIT_FLAGS, ...NETWORK_FLAGS, image, ...command]);
  return stdout;
}

export interface ContainerSpec {
  name: string;
  image: string;
  env: Record<string, string>;
  /** podman's `--volume` values: `<host path>:<container path>[:ro]`. */
  volumes: readonly string[];
}

/**
 * Starts a container as an orchestrator would run the image: root filesystem read-only with only
 * /tmp writable (podman's own tmpfs over /run and /var/tmp turned off, as Kubernetes has none), no
 * capabilities, no privilege escalation. Resolves with its id.
 */
export async function startContainer(spec: ContainerSpec): Promise<string> {
  const env = Object.entries(spec.env).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
  const volumes = spec.volumes.flatMap((volume) => ['--volume', volume]);
  const { stdout } = await podman([
    'run',
    '--detach',
    '--name',
    spec.name,
    '--read-only',
    '--read-only-tmpfs=false',
    '--tmpfs',
    '/tmp:rw,nosuid,nodev,size=64m',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    ...LIMIT_FLAGS,
    ...NETWORK_FLAGS,
    ...env,
    ...volumes,
    spec.image,
  ]);
  return stdout.trim();
}

/** Sends `signal` to the container's main process (the subgraph, PID 1). */
export async function signalContainer(name: string, signal: string): Promise<void> {
  await podman(['kill', '--signal', signal, name]);
}

/** Resolves with the container's exit code once it has stopped. */
export async function waitForExit(name: string): Promise<number> {
  const { stdout } = await podman(['wait', '--interval', '50ms', name]);
  return Number(stdout.trim());
}

/** Everything the container printed. */
export async function containerLogs(name: string): Promise<string> {
  const { stdout, stderr } = await podman(['logs', name], { allowFailure: true });
  return `${stdout}${stderr}`;
}

/** Removes the container, running or not, with the anonymous volume the image's VOLUME gave it; nothing if it is already gone. */
export async function removeContainer(name: string): Promise<void> {
  await podman(['rm', '--force', '--ignore', '--volumes', '--time', '0', name], { allowFailure: true });
}

/**
 * What operators apply, read the way their tools read it: the Dockerfile's instructions, compose.yaml
 * with its variables at their defaults, the Caddyfile's placeholders at theirs, and the Kubernetes
 * manifests by kind.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const KUBERNETES_DIR = join(ROOT, 'deploy', 'kubernetes');

export function readRepoFile(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

export interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions in order: comments dropped, continued lines joined. */
export function dockerfileInstructions(text: string): Instruction[] {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return logical
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

/**
 * compose's interpolation of `value` with `given` as the environment (a `.env` file): `${NAME}`,
 * `${NAME:-default}` (the default when unset or empty), `${NAME:?message}` (required: compose refuses
 * to start without it). Missing required names are added to `missing`.
 */
export function interpolate(value: string, given: Readonly<Record<string, string>>, missing: Set<string> = new Set()): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?:(:?)([-?])([^}]*))?\}/g,
    (_match, name: string, colon: string, kind: string | undefined, text: string) => {
      const set = given[name];
      const present = colon === ':' ? set !== undefined && set !== '' : set !== undefined;
      if (present) return set!;
      if (kind === '?') missing.add(name);
      return kind === '-' ? text : '';
    },
  );
}

/** Thrown as compose refuses to start: a required variable (`${NAME:?…}`) is not set. */
export class ComposeVariablesMissing extends Error {
  readonly names: readonly string[];
  constructor(names: string[]) {
    super(`compose.yaml needs ${names.join(', ')}`);
    this.names = names;
  }
}

/** compose.yaml as it is written, variables not interpolated (merge keys resolved). */
export function composeText(): ComposeFile {
  return parse(readRepoFile('compose.yaml'), { merge: true }) as ComposeFile;
}

/** compose.yaml as compose reads it with `env` as its environment (merge keys resolved); throws as compose would refuse. */
export function composeFile(env: Readonly<Record<string, string>> = {}): ComposeFile {
  const missing = new Set<string>();
  const file = JSON.parse(
    JSON.stringify(composeText(), (_key, value: unknown) => (typeof value === 'string' ? interpolate(value, env, missing) : value)),
  ) as ComposeFile;
  if (missing.size > 0) throw new ComposeVariablesMissing([...missing]);
  return file;
}

export interface ComposeService {
  image?: string;
  build?: { context: string; args?: Record<string, string> };
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
  read_only?: boolean;
  tmpfs?: string[];
  cap_drop?: string[];
  security_opt?: string[];
  stop_grace_period?: string;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
}

/** Compose's duration (`20s`, `1m30s`) in seconds. */
export function durationSeconds(text: string): number {
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) {
    seconds += Number(amount) * { h: 3600, m: 60, s: 1, ms: 0.001 }[unit as 'h' | 'm' | 's' | 'ms'];
  }
  return seconds;
}

/** The Caddyfile's text with every `{$NAME:default}` at its default. */
export function caddyfileAtDefaults(): string {
  return readRepoFile('deploy/compose/Caddyfile').replace(
    /\{\$([A-Z0-9_]+)(?::([^}]*))?\}/g,
    (_match, _name: string, fallback: string | undefined) => fallback ?? '',
  );
}

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: any;
}

/** Every object in deploy/kubernetes/ but the kustomization, with the file it came from. */
export function kubernetesObjects(): { file: string; object: KubernetesObject }[] {
  return readdirSync(KUBERNETES_DIR)
    .filter((file) => /\.ya?ml$/.test(file) && file !== 'kustomization.yaml')
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(KUBERNETES_DIR, file), 'utf8'))
        .map((document) => document.toJS() as KubernetesObject | null)
        .filter((object): object is KubernetesObject => object !== null)
        .map((object) => ({ file, object })),
    );
}

/** The one object of `kind` (and `name`, when given). */
export function kubernetesObject(kind: string, name?: string): KubernetesObject {
  const found = kubernetesObjects().filter(({ object }) => object.kind === kind && (name === undefined || object.metadata.name === name));
  if (found.length !== 1)
    throw new Error(`expected one ${kind}${name ? ` named ${name}` : ''} in deploy/kubernetes, found ${found.length}`);
  return found[0]!.object;
}

/** The keys docs/deployment.md has operators put in the Secret (its `--from-literal=NAME=…` lines). */
export function documentedSecretKeys(): string[] {
  return [...readRepoFile('docs/deployment.md').matchAll(/--from-literal=([A-Z0-9_]+)=/g)].map((match) => match[1]!);
}

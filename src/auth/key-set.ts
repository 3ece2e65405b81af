// The issuer's public keys: a JWKS served over HTTP(S), or one in a file. Read again when it is older
// than its max age (so a key the issuer withdraws stops working) and when a token names a key the
// last read lacked (a rotation at the issuer), at most once per cool-down.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  errors,
  exportJWK,
  type CryptoKey,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';

/** What jose's `jwtVerify` takes to find the key of a token. */
export type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

export interface KeySet {
  /** The key a token's header names, from the JWKS as last read (read again first when stale). */
  readonly resolve: KeyResolver;
  /**
   * The RFC 7638 thumbprints of the keys the JWKS holds, as last read; read again first when older
   * than its max age. A failed read keeps the last good one (tried again after the cool-down).
   */
  current(): Promise<ReadonlySet<string>>;
}

export interface KeySetOptions {
  /** `AUTH_JWKS_MAX_AGE_S` in milliseconds: how long a read of the JWKS counts as current. */
  maxAgeMs: number;
}

/**
 * The least time between two reads prompted by unknown keys or failed reads, so a stream of tokens
 * with made-up `kid`s cannot make us hammer the issuer: jose's default for remote sets, or a tenth
 * of a shorter max age.
 */
const COOLDOWN_MS = 30_000;
/** A remote JWKS answer slower than this fails the read. */
const FETCH_TIMEOUT_MS = 5_000;

/** The path a `file:` JWKS location names: `file:relative/path`, `file:/absolute` or `file:///absolute`. */
export function jwksFilePath(location: string): string {
  return location.startsWith('file://') ? fileURLToPath(location) : resolve(location.slice('file:'.length));
}

/**
 * The keys at `location` (`https://…`, `http://…` or `file:<path>`). A file is read here, so a
 * missing or broken one stops the start; a remote set is fetched on the first token.
 */
export async function openKeySet(location: string, { maxAgeMs }: KeySetOptions): Promise<KeySet> {
  const load = location.startsWith('file:') ? () => readKeySetFile(jwksFilePath(location)) : () => fetchKeySet(new URL(location));
  const cooldownMs = Math.min(COOLDOWN_MS, maxAgeMs / 10);
  let last: { lookup: KeyResolver; thumbprints: Promise<ReadonlySet<string>> } | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;

  const read = () =>
    (reading ??= load()
      .then((jwks) => {
        last = { lookup: createLocalJWKSet(jwks), thumbprints: thumbprintsOf(jwks) };
        readAt = performance.now();
      })
      .catch((error: unknown) => {
        // Tried again after the cool-down, not on every request while the issuer is down.
        readAt = performance.now() - maxAgeMs + cooldownMs;
        throw error;
      })
      .finally(() => (reading = undefined)));
  /** The last read, read again first when stale; the stale one when that fails, else the failure. */
  const latest = async () => {
    if (performance.now() - readAt >= maxAgeMs) await read().catch((error: unknown) => {
      if (last === undefined) throw error;
    });
    if (last === undefined) throw new Error('the JWKS has not been read');
    return last;
  };

  if (location.startsWith('file:')) await read();
  return {
    async resolve(header, token) {
      const { lookup } = await latest();
      try {
        return await lookup(header, token);
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey) || performance.now() - readAt < cooldownMs) throw error;
        await read();
        return last!.lookup(header, token);
      }
    },
    current: async () => (await latest().catch(() => undefined))?.thumbprints ?? new Set(),
  };
}

async function readKeySetFile(path: string): Promise<JSONWebKeySet> {
  return asKeySet(JSON.parse(await readFile(path, 'utf8')), path);
}

async function fetchKeySet(url: URL): Promise<JSONWebKeySet> {
  // A redirect is not followed: the keys come from the address configured, or not at all.
  const response = await fetch(url, {
    headers: { accept: 'application/json, application/jwk-set+json' },
    redirect: 'error',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`the JWKS answered HTTP ${response.status}`);
  return asKeySet(await response.json(), 'the JWKS');
}

function asKeySet(parsed: unknown, where: string): JSONWebKeySet {
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as { keys?: unknown }).keys)) {
    throw new Error(`${where} is not a JWKS document ({ "keys": [...] })`);
  }
  return parsed as JSONWebKeySet;
}

async function thumbprintsOf(jwks: JSONWebKeySet): Promise<ReadonlySet<string>> {
  const thumbprints = await Promise.all(jwks.keys.map((jwk) => calculateJwkThumbprint(jwk).catch(() => undefined)));
  return new Set(thumbprints.filter((thumbprint) => thumbprint !== undefined));
}

const keyThumbprints = new WeakMap<CryptoKey, Promise<string>>();

/** The RFC 7638 thumbprint of a public key jose resolved, worked out once per key. */
export function thumbprintOf(key: CryptoKey): Promise<string> {
  let thumbprint = keyThumbprints.get(key);
  if (thumbprint === undefined) {
    thumbprint = exportJWK(key).then((jwk) => calculateJwkThumbprint(jwk));
    keyThumbprints.set(key, thumbprint);
  }
  return thumbprint;
}

/**
 * `keys` refusing any key whose thumbprint is in `refused`: a JWKS served over HTTP could hold the
 * published development key, whatever its `kid`.
 */
export function refusingKeys(keys: KeySet, refused: ReadonlySet<string>, error: () => Error): KeySet {
  return {
    async resolve(header, token) {
      const key = await keys.resolve(header, token);
      if (refused.has(await thumbprintOf(key))) throw error();
      return key;
    },
    current: () => keys.current(),
  };
}

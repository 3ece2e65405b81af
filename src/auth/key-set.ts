// The issuer's public keys: a JWKS served over HTTP(S), or one in a file, each looked up by the
// token's header and read again when a token names a key not seen yet (a rotation at the issuer).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  exportJWK,
  type CryptoKey,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';

/** What jose's `jwtVerify` takes to find the key of a token. */
export type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

export interface KeySetOptions {
  /**
   * The least time between two reads of the JWKS prompted by unknown keys, so a stream of tokens
   * with made-up `kid`s cannot make us hammer the issuer (jose's default for remote sets).
   */
  refetchCooldownMs?: number | undefined;
}

/** jose's own cool-down between fetches of a remote JWKS. */
const DEFAULT_COOLDOWN_MS = 30_000;
/** A remote JWKS answer slower than this fails the verification (keys_unavailable). */
const FETCH_TIMEOUT_MS = 5_000;

/** The path a `file:` JWKS location names: `file:relative/path`, `file:/absolute` or `file:///absolute`. */
export function jwksFilePath(location: string): string {
  return location.startsWith('file://') ? fileURLToPath(location) : resolve(location.slice('file:'.length));
}

/**
 * The keys at `location` (`https://…`, `http://…` or `file:<path>`). A file is read once here, so a
 * missing or broken one stops the start; a remote set is fetched on the first token.
 */
export async function openKeySet(location: string, options: KeySetOptions = {}): Promise<KeyResolver> {
  const cooldownMs = options.refetchCooldownMs ?? DEFAULT_COOLDOWN_MS;
  if (location.startsWith('file:')) return fileKeySet(jwksFilePath(location), cooldownMs);
  return createRemoteJWKSet(new URL(location), { cooldownDuration: cooldownMs, timeoutDuration: FETCH_TIMEOUT_MS });
}

async function readKeySet(path: string): Promise<JSONWebKeySet> {
  const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as { keys?: unknown }).keys)) {
    throw new Error(`${path} is not a JWKS document ({ "keys": [...] })`);
  }
  return parsed as JSONWebKeySet;
}

/** A file's keys, read again (at most once per cool-down) when a token names a key the last read lacked. */
async function fileKeySet(path: string, cooldownMs: number): Promise<KeyResolver> {
  let keys = createLocalJWKSet(await readKeySet(path));
  let readAt = performance.now();
  let reading: Promise<void> | undefined;
  return async (header, token) => {
    try {
      return await keys(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      if (reading === undefined && performance.now() - readAt < cooldownMs) throw error;
      readAt = performance.now();
      reading ??= readKeySet(path)
        .then((jwks) => void (keys = createLocalJWKSet(jwks)))
        .finally(() => (reading = undefined));
      await reading;
      return keys(header, token);
    }
  };
}

/**
 * `keys` refusing any key whose JWK thumbprint (RFC 7638) is in `refused`: a JWKS served over HTTP
 * could hold the published development key, whatever its `kid`. Each key is looked at once.
 */
export function refusingKeys(keys: KeyResolver, refused: ReadonlySet<string>, error: () => Error): KeyResolver {
  const verdicts = new WeakMap<CryptoKey, Promise<boolean>>();
  const isRefused = (key: CryptoKey) => {
    let verdict = verdicts.get(key);
    if (verdict === undefined) {
      verdict = exportJWK(key).then(async (jwk) => refused.has(await calculateJwkThumbprint(jwk)));
      verdicts.set(key, verdict);
    }
    return verdict;
  };
  return async (header, token) => {
    const key = await keys(header, token);
    if (await isRefused(key)) throw error();
    return key;
  };
}

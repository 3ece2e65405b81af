// The issuer's public keys: jose's remote key set over a JWKS served over HTTP(S), or in a file (read
// through the same set, by a fetch of our own). Read again when older than its max age (so a key the
// issuer withdraws stops working) and when a token names a key the last read lacked (a rotation at
// the issuer), at most once per cool-down; the last good read is kept while the issuer is down.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  exportJWK,
  jwksCache,
  type CryptoKey,
  type ExportedJWKSCache,
  type FetchImplementation,
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
  /**
   * Calls `withdrawn` once a read of the JWKS no longer holds the key of `thumbprint`; returns how
   * to stop watching. While any key is watched the JWKS is read again as soon as it is older than
   * its max age, requests or none, so an open subscription learns of a withdrawal within that time.
   */
  watch(thumbprint: string, withdrawn: () => void): () => void;
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
/** A remote JWKS answer slower than this fails the read (jose's default). */
const FETCH_TIMEOUT_MS = 5_000;

/** The path a `file:` JWKS location names: `file:relative/path`, `file:/absolute` or `file:///absolute`. */
export function jwksFilePath(location: string): string {
  return location.startsWith('file://') ? fileURLToPath(location) : resolve(location.slice('file:'.length));
}

/**
 * The keys at `location` (`https://…`, `http://…` or `file:<path>`). A file is read here, so a
 * missing or broken one stops the start; a remote set is fetched on the first token. jose's remote
 * set does the reading (max age, cool-down, time-out, no redirect followed); this adds what it
 * leaves out: the last good read kept while the issuer is down, and the watch on withdrawn keys.
 */
export async function openKeySet(location: string, { maxAgeMs }: KeySetOptions): Promise<KeySet> {
  const cooldownMs = Math.min(COOLDOWN_MS, maxAgeMs / 10);
  const file = location.startsWith('file:') ? jwksFilePath(location) : undefined;
  // jose records each good read here (its time and document): what is kept when a later read fails.
  const lastGood: Partial<ExportedJWKSCache> = {};
  // Epoch ms before which a failed read is not tried again, whatever asks: the issuer is down.
  let retryAt = Number.NEGATIVE_INFINITY;
  const load: FetchImplementation = file === undefined ? (url, init) => fetch(url, init) : () => readKeySetFile(file);
  const remote = createRemoteJWKSet(file === undefined ? new URL(location) : pathToFileURL(file), {
    cacheMaxAge: maxAgeMs,
    cooldownDuration: cooldownMs,
    timeoutDuration: FETCH_TIMEOUT_MS,
    [jwksCache]: lastGood as ExportedJWKSCache,
    [customFetch]: async (url, init) => {
      if (Date.now() < retryAt) throw new CoolingDown();
      const response = await load(url, init).catch((error: unknown) => {
        retryAt = Date.now() + cooldownMs;
        throw error;
      });
      if (response.status !== 200) retryAt = Date.now() + cooldownMs;
      return response;
    },
  });
  const watch = createKeyWatch({
    // When the last good read goes stale, or the next try after a failed one.
    nextReadAt: () => Math.max((lastGood.uat ?? Number.NEGATIVE_INFINITY) + maxAgeMs, retryAt),
    reread: () => refresh(true),
  });

  /** The JWKS read again when stale (or `force`d); a failure keeps the last good read, if there is one. */
  const refresh = async (force = false): Promise<void> => {
    if (force || !remote.fresh) {
      await remote.reload().catch((error: unknown) => {
        // A document that is not a key set fails after its fetch: not tried again before the cool-down either.
        if (!(error instanceof CoolingDown)) retryAt = Math.max(retryAt, Date.now() + cooldownMs);
        if (lastGood.jwks === undefined) throw error;
      });
    }
    await watch.observe(lastGood.jwks);
  };

  if (file !== undefined) await refresh();
  return {
    async resolve(header, token) {
      await refresh();
      // Fresh: jose's set, which reads again for an unknown kid (after the cool-down). Stale (the
      // issuer is down): the last good read.
      const lookup = remote.fresh ? remote : localSetOf(lastGood.jwks!);
      try {
        return await lookup(header, token);
      } finally {
        await watch.observe(lastGood.jwks);
      }
    },
    async current() {
      await refresh().catch(() => undefined);
      return lastGood.jwks === undefined ? new Set() : thumbprintsOf(lastGood.jwks);
    },
    watch: watch.add,
  };
}

/**
 * The watched keys and the timer that reads the JWKS again for them at `nextReadAt()` (epoch ms).
 * `observe` is told of every read's document and calls the watchers of each key it no longer holds.
 */
function createKeyWatch(options: { nextReadAt: () => number; reread: () => Promise<void> }) {
  const watchers = new Map<string, Set<() => void>>();
  let seen: JSONWebKeySet | undefined;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    clearTimeout(timer);
    timer = undefined;
    if (watchers.size === 0) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        // A failed read keeps the last good one and is tried again after the cool-down.
        void options
          .reread()
          .catch(() => undefined)
          .finally(() => timer ?? schedule());
      },
      Math.max(options.nextReadAt() - Date.now(), 0),
    );
    // Watching must not keep a process alive that is otherwise done.
    timer.unref();
  };

  return {
    add(thumbprint: string, withdrawn: () => void): () => void {
      const set = watchers.get(thumbprint) ?? new Set();
      watchers.set(thumbprint, set);
      set.add(withdrawn);
      // A key withdrawn between its token's check and now is seen gone by the next read, as any other.
      if (timer === undefined) schedule();
      return () => {
        set.delete(withdrawn);
        if (set.size === 0 && watchers.get(thumbprint) === set) watchers.delete(thumbprint);
        if (watchers.size === 0) schedule();
      };
    },
    async observe(jwks: JSONWebKeySet | undefined): Promise<void> {
      if (jwks === undefined || jwks === seen) return;
      seen = jwks;
      const held = await thumbprintsOf(jwks);
      for (const [thumbprint, set] of watchers) {
        if (held.has(thumbprint)) continue;
        watchers.delete(thumbprint);
        const withdrawn = [...set];
        set.clear();
        for (const notify of withdrawn) notify();
      }
      schedule();
    },
  };
}

/** A read not tried, a failed one being too recent. */
class CoolingDown extends Error {
  constructor() {
    super('the JWKS could not be read a moment ago; not read again before the cool-down');
    this.name = 'CoolingDown';
  }
}

async function readKeySetFile(path: string): Promise<Response> {
  const jwks = asKeySet(JSON.parse(await readFile(path, 'utf8')), path);
  return Response.json(jwks);
}

function asKeySet(parsed: unknown, where: string): JSONWebKeySet {
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as { keys?: unknown }).keys)) {
    throw new Error(`${where} is not a JWKS document ({ "keys": [...] })`);
  }
  return parsed as JSONWebKeySet;
}

const localSets = new WeakMap<JSONWebKeySet, ReturnType<typeof createLocalJWKSet>>();

/** A resolver over one read's document, made once per read. */
function localSetOf(jwks: JSONWebKeySet): KeyResolver {
  let local = localSets.get(jwks);
  if (local === undefined) localSets.set(jwks, (local = createLocalJWKSet(jwks)));
  return local;
}

const documentThumbprints = new WeakMap<JSONWebKeySet, Promise<ReadonlySet<string>>>();

/** The thumbprints of the keys of one read's document, worked out once per read. */
function thumbprintsOf(jwks: JSONWebKeySet): Promise<ReadonlySet<string>> {
  let thumbprints = documentThumbprints.get(jwks);
  if (thumbprints === undefined) {
    thumbprints = Promise.all(jwks.keys.map((jwk) => calculateJwkThumbprint(jwk).catch(() => undefined))).then(
      (all) => new Set(all.filter((thumbprint) => thumbprint !== undefined)),
    );
    documentThumbprints.set(jwks, thumbprints);
  }
  return thumbprints;
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
    watch: (thumbprint, withdrawn) => keys.watch(thumbprint, withdrawn),
  };
}

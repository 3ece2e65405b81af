import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { listenOnLoopback } from './loopback.ts';

/** The issuer every test token names unless told otherwise. */
export const TEST_ISSUER = 'https://issuer.test.invalid';
export const TEST_AUDIENCE = 'bank-subgraph-test';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface TokenClaims {
  /** Space-separated scopes (the `scope` claim); none when undefined. */
  scope?: string | undefined;
  /** The accounts claim; absent when undefined. */
  accounts?: readonly string[] | undefined;
  /** Seconds from now to `exp` (negative: already expired); 600 unless given. */
  expiresIn?: number;
  /** Seconds from now to `nbf`. */
  notBefore?: number;
  issuer?: string;
  audience?: string | undefined;
  /** The `sub`; `test-caller` unless given. */
  subject?: string;
  /** Any other claim. */
  extra?: Record<string, unknown>;
}

let keyCounter = 0;

async function newKey(alg = 'ES256'): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `test-key-${(keyCounter += 1)}`;
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/**
 * A token issuer of the test's own: keys it generates, the JWKS that publishes them, and tokens it
 * signs. `rotate()` adds a new key (published) and signs with it from then on.
 */
export class TestIssuer {
  #keys: SigningKey[];
  #signing: SigningKey;

  private constructor(first: SigningKey) {
    this.#keys = [first];
    this.#signing = first;
  }

  static async create(): Promise<TestIssuer> {
    return new TestIssuer(await newKey());
  }

  /** The JWKS document of every key published so far. */
  jwks(): { keys: JWK[] } {
    return { keys: this.#keys.map((key) => key.publicJwk) };
  }

  /** Takes the key `kid` out of the JWKS, as an issuer does after a compromise; tokens it signed stay as they were. */
  withdraw(kid: string): void {
    this.#keys = this.#keys.filter((key) => key.kid !== kid);
  }

  /** The kid of the key signing now. */
  get kid(): string {
    return this.#signing.kid;
  }

  /** Publishes a new key and signs with it from now on; resolves to its kid. */
  async rotate(): Promise<string> {
    this.#signing = await newKey();
    this.#keys.push(this.#signing);
    return this.#signing.kid;
  }

  /** A token with `claims`, signed by the current key (or `key`, an unpublished one, for a wrong-key token). */
  async sign(claims: TokenClaims = {}, key: SigningKey = this.#signing): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = { ...claims.extra };
    if (claims.scope !== undefined) payload.scope = claims.scope;
    if (claims.accounts !== undefined) payload.accounts = claims.accounts;
    const jwt = new SignJWT(payload)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(claims.issuer ?? TEST_ISSUER)
      .setSubject(claims.subject ?? 'test-caller')
      .setIssuedAt(now)
      .setExpirationTime(now + (claims.expiresIn ?? 600));
    if (claims.audience !== undefined) jwt.setAudience(claims.audience);
    if (claims.notBefore !== undefined) jwt.setNotBefore(now + claims.notBefore);
    return jwt.sign(key.privateKey);
  }

  /** A token signed by a key this issuer never published. */
  async signWithUnknownKey(claims: TokenClaims = {}): Promise<string> {
    const stranger = await newKey();
    return this.sign(claims, { ...stranger, kid: this.#signing.kid });
  }
}

/** `Authorization: Bearer <token>` as request headers. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** An unsigned token (`alg: none`) with these claims, as an attacker would send one. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ iss: TEST_ISSUER, exp: now + 600, ...claims })}.`;
}

/**
 * Serves `issuer`'s JWKS over HTTP on a loopback port; counts the fetches. `down(true)` makes it
 * answer 503, as an issuer in an outage, until `down(false)`. Closed after the test.
 */
export async function serveJwks(issuer: TestIssuer): Promise<{ url: string; fetches: () => number; down: (down: boolean) => void }> {
  let fetches = 0;
  let unavailable = false;
  const server = createServer((_request, response) => {
    fetches += 1;
    if (unavailable) return void response.writeHead(503).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(issuer.jwks()));
  });
  return { url: `${await listenOnLoopback(server)}/.well-known/jwks.json`, fetches: () => fetches, down: (down) => (unavailable = down) };
}

/** Writes `issuer`'s JWKS to a fresh temporary file; resolves to its `file:` location. */
export function writeJwksFile(issuer: TestIssuer): string {
  const path = join(mkdtempSync(join(tmpdir(), 'bank-subgraph-jwks-')), 'jwks.json');
  writeFileSync(path, JSON.stringify(issuer.jwks()));
  return `file:${path}`;
}

// Who is calling, as the rest of the subgraph sees it: never the token itself, only what it grants.

/**
 * Why a caller was refused: the label of `graphql_authorization_refusals_total{reason}`. A closed
 * set, so a token's contents can never reach a metric.
 */
export const REFUSAL_REASONS = [
  // No token where a field needs one.
  'no_token',
  // A token that is not a well-formed `Bearer <JWT>`.
  'malformed_token',
  // The token's signature does not verify against the key its header names.
  'bad_signature',
  // No key of the issuer's JWKS matches the token's header (`kid`, `alg`).
  'unknown_key',
  // `alg` outside the allow-list of asymmetric algorithms (`none`, HS256, …).
  'algorithm_not_allowed',
  'expired',
  'not_yet_valid',
  'wrong_issuer',
  'wrong_audience',
  // A claim the subgraph reads (`exp`, `scope`, the accounts claim) is missing or of the wrong shape.
  'invalid_claims',
  // Signed by the published development key, outside the sandbox rules.
  'development_key',
  // The issuer's JWKS could not be read.
  'keys_unavailable',
  // A valid token without the scope a field needs.
  'missing_scope',
  // A valid token asking for an account it does not name.
  'forbidden_account',
  // A callback-protocol subscription naming a URL outside SUBSCRIPTION_CALLBACK_URLS.
  'callback_url_refused',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Why a token presented was not accepted. */
export type TokenRefusal = Exclude<RefusalReason, 'no_token' | 'missing_scope' | 'forbidden_account' | 'callback_url_refused'>;

/** The accounts whose money records a caller may read: every one, or exactly these (sorted, distinct). */
export type VisibleAccounts = 'all' | readonly string[];

/** A caller whose token verified: what it grants, and when it stops. */
export interface VerifiedCaller {
  readonly kind: 'verified';
  readonly scopes: ReadonlySet<string>;
  readonly accounts: VisibleAccounts;
  /** When the token stops being accepted: what ends what it opened (sockets, subscriptions). */
  readonly lifetime: TokenLifetime;
  /** The token's `sub`, when it names one: who recorded what (a quarantine review), who holds which subscriptions. */
  readonly subject: string | undefined;
}

/** How long a verified token stays accepted: until its `exp` (with the clock skew), or until its key is withdrawn. */
export interface TokenLifetime {
  /**
   * Epoch milliseconds from which it is refused: its `exp` plus the clock skew it was accepted
   * within, so a token accepted a moment past its `exp` is not closed at once.
   */
  readonly acceptedUntil: number;
  /**
   * Calls `withdrawn` once the key that signed it is seen gone from the issuer's JWKS (read again
   * at least every AUTH_JWKS_MAX_AGE_S while anyone listens); returns how to stop listening.
   */
  onKeyWithdrawn(withdrawn: () => void): () => void;
}

/** The lifetime of nothing that ends: a shared execution's, whose members each end with their own token. */
const ENDLESS: TokenLifetime = Object.freeze({ acceptedUntil: Number.POSITIVE_INFINITY, onKeyWithdrawn: () => () => undefined });

/**
 * The caller of one operation. `unchecked`: authorization is off (no AUTH_JWKS_URL, under the
 * sandbox rules only), so every field is answered. `anonymous`: no token. `refused`: a token that did not verify.
 */
export type Caller =
  | { readonly kind: 'unchecked' }
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'refused'; readonly reason: TokenRefusal }
  | VerifiedCaller;

export const UNCHECKED: Caller = Object.freeze({ kind: 'unchecked' });
export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });

/** The scope that reads every account's collections, whatever the accounts claim says. */
export const ALL_ACCOUNTS_SCOPE = 'collections:read:all';

/** The accounts `caller` may read: none for a caller without a valid token. */
export function visibleAccounts(caller: Caller): VisibleAccounts {
  if (caller.kind === 'unchecked') return 'all';
  return caller.kind === 'verified' ? caller.accounts : [];
}

/** Whether the caller counts as authenticated (for spans: never who). */
export function isAuthenticated(caller: Caller): boolean {
  return caller.kind === 'verified';
}

/**
 * What decides every answer `caller` can get, and nothing else (no identity, no expiry): callers with
 * equal keys get the same answers, so they may share one subscription execution.
 */
export function accessKey(caller: Caller): string {
  if (caller.kind !== 'verified') return caller.kind === 'refused' ? `refused:${caller.reason}` : caller.kind;
  return JSON.stringify([[...caller.scopes].sort(), caller.accounts]);
}

/** The caller a shared execution runs as: the same grants as `caller`, its end left to each member's connection. */
export function sharedCaller(caller: Caller): Caller {
  return caller.kind === 'verified' ? { ...caller, lifetime: ENDLESS } : caller;
}

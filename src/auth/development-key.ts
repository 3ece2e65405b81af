// The development key pair under dev/: published in the repository so anyone can mint a token for a
// local subgraph (`npm run token`), and so refused everywhere but under the sandbox rules.
import { join, resolve } from 'node:path';

/** The repository's dev/ folder. */
const DEV_DIR = join(import.meta.dirname, '..', '..', 'dev');

/** The development JWKS (public key) a local subgraph is pointed at: `AUTH_JWKS_URL=file:dev/auth-jwks.json`. */
export const DEVELOPMENT_JWKS_PATH = resolve(DEV_DIR, 'auth-jwks.json');

/** The development private key (a JWK) that `npm run token` signs with. */
export const DEVELOPMENT_PRIVATE_KEY_PATH = resolve(DEV_DIR, 'auth-private-key.json');

/** The `iss` of development tokens, and the AUTH_ISSUER the README starts a local subgraph with. */
export const DEVELOPMENT_ISSUER = 'https://bank-subgraph.dev.invalid';

/**
 * RFC 7638 thumbprints of the published development keys: a key with one of these is refused
 * outside the sandbox rules however it is served (a file, or a JWKS URL). A test pins it to dev/auth-jwks.json.
 */
export const DEVELOPMENT_KEY_THUMBPRINTS: ReadonlySet<string> = new Set(['2v9uM1ECy_iNOt0oZ9Xz-w35Q5bzAFDq9VXihRdZMYY']);

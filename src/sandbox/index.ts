import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fastify, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { accountRoutes } from './account.ts';
import { billingRoutes } from './billing.ts';
import { createCollectionService, type CollectionPartner } from './collection.ts';
import { sandboxCredentials } from './credentials.ts';
import { headerValue, type SandboxDeps } from './http.ts';
import { postingRoutes } from './posting.ts';
import { authorizeRoutes, createOAuthState, tokenRoutes } from './transaction.ts';
import { walletRoutes } from './wallet.ts';
import { Secret } from '../secret.ts';

/** Where each area of the sandbox answers: the spec's placeholders, as a live deployment configures them. */
export interface SandboxUrls {
  base: string;
  gateway: string;
  billing: string;
  posting: string;
  wallet: string;
  /** `{collection_url}`: the collection service's API (ops 15-17). */
  collection: string;
}

export interface BankSandbox {
  urls: SandboxUrls;
  collection: {
    /** The bank's test console: `POST <consoleUrl>/transfers` makes a transfer (docs/sandbox.md). */
    consoleUrl: string;
    /** Tells the bank where the partner's webhook is, once it listens; until then nothing is delivered. */
    deliverTo(webhookUrl: string): void;
  };
  close(): Promise<void>;
}

export interface BankSandboxOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Receives one debug line per request (method, path, status); never a credential. */
  logger?: Logger;
  /** The clock of code and token expiry, in ms since the epoch; default Date.now. */
  now?: () => number;
  /** What the bank signs its notifications with and checks on ops 15-17; default the sandbox's webhook pair. */
  partner?: CollectionPartner;
  /** The bank's zone, for the local times it writes; default Africa/Lagos. */
  timezone?: string;
}

/** Each area under its own path prefix, so clients that drop a prefix fail here as they would live. */
export const SANDBOX_PREFIXES = {
  base: '/bank',
  gateway: '/gateway',
  billing: '/billing/provipay/webapi',
  posting: '/posting/postingrest',
  wallet: '/wallet',
  collection: '/collection',
} as const satisfies SandboxUrls;

/** Where the bank's test console answers: not a bank API, so not among the areas. */
const CONSOLE_PREFIX = '/console/collection';

const BODY_LIMIT = 1024 * 1024;

/** Starts the in-process bank sandbox: every area of the spec over real HTTP, with its auth rules. */
export async function startBankSandbox(options: BankSandboxOptions = {}): Promise<BankSandbox> {
  const host = options.host ?? '127.0.0.1';
  const deps: SandboxDeps = { now: options.now ?? Date.now, logger: options.logger?.child({ component: 'bank-sandbox' }) };
  // Fastify's own request logging is off: it would log at info, and headers carry credentials.
  const app = fastify({ logger: false, bodyLimit: BODY_LIMIT });

  keepBodiesAsText(app);
  logRequests(app, deps.logger);

  const oauth = createOAuthState(deps);
  await app.register(accountRoutes(deps), { prefix: SANDBOX_PREFIXES.base });
  await app.register(authorizeRoutes(oauth), { prefix: SANDBOX_PREFIXES.base });
  await app.register(tokenRoutes(oauth), { prefix: SANDBOX_PREFIXES.gateway });
  await app.register(billingRoutes(deps), { prefix: SANDBOX_PREFIXES.billing });
  await app.register(postingRoutes(deps), { prefix: SANDBOX_PREFIXES.posting });
  await app.register(walletRoutes(deps), { prefix: SANDBOX_PREFIXES.wallet });
  const partner = options.partner ?? {
    clientId: sandboxCredentials.webhookClientId,
    clientSecret: new Secret(sandboxCredentials.webhookClientSecret),
  };
  const collection = createCollectionService(deps, partner, options.timezone ?? 'Africa/Lagos');
  await app.register(collection.apiRoutes, { prefix: SANDBOX_PREFIXES.collection });
  await app.register(collection.consoleRoutes, { prefix: CONSOLE_PREFIX });

  try {
    await app.listen({ host, port: options.port ?? 0 });
  } catch (error) {
    await app.close();
    await collection.close();
    throw error;
  }
  const origin = `http://${urlHost(host)}:${(app.server.address() as AddressInfo).port}`;
  const urls: SandboxUrls = {
    base: origin + SANDBOX_PREFIXES.base,
    gateway: origin + SANDBOX_PREFIXES.gateway,
    billing: origin + SANDBOX_PREFIXES.billing,
    posting: origin + SANDBOX_PREFIXES.posting,
    wallet: origin + SANDBOX_PREFIXES.wallet,
    collection: origin + SANDBOX_PREFIXES.collection,
  };
  deps.logger?.debug({ urls }, 'bank sandbox listening');
  return {
    urls,
    collection: { consoleUrl: origin + CONSOLE_PREFIX, deliverTo: (url) => collection.deliverTo(url) },
    async close() {
      // Deliveries in flight end first: they are the sandbox's own requests, not its clients'.
      await collection.close();
      await app.close();
    },
  };
}

/** A host to put in a URL: a wildcard bind is reached over loopback; IPv6 goes in brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** One parser for every content type, keeping the body as text; each route parses it itself. */
function keepBodiesAsText(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  // Fastify parses no body on GET; op 4 may carry its form in one, so read it here.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && hasBody(request)) request.body = await readText(request.raw);
  });
}

function hasBody(request: FastifyRequest): boolean {
  const length = headerValue(request, 'content-length');
  return headerValue(request, 'transfer-encoding') !== undefined || (length !== undefined && length !== '0');
}

async function readText(stream: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw Object.assign(new Error('Request body is too large'), { statusCode: 413 });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One debug line per answered request: method, path and status; never headers, query or body. */
function logRequests(app: FastifyInstance, logger: Logger | undefined): void {
  if (logger === undefined) return;
  app.addHook('onResponse', async (request, reply) => {
    const path = request.url.split('?')[0];
    const ms = Math.round(reply.elapsedTime);
    logger.debug({ method: request.method, path, statusCode: reply.statusCode, ms }, 'bank sandbox request');
  });
}

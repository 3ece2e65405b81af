/**
 * The suite reaches nothing past loopback: a setup file of both vitest configs. Every TCP connection a
 * test worker opens goes through `net.Socket.prototype.connect` (net.connect, tls.connect, and so
 * undici, ws, pg and ioredis alike), so that one method is guarded: a connection to an address that is
 * not loopback, or to a name other than `localhost`, is refused before any packet or DNS query leaves,
 * and fails the test that opened it, naming where it went. Unix sockets are this machine's.
 *
 * The one global the suite patches, once per worker and never undone: a guard, not a test double.
 * Child processes are not guarded; they get APOLLO_TELEMETRY_DISABLED from the configs' `env`.
 */
import { isIP, Socket } from 'node:net';
import { afterAll, afterEach } from 'vitest';

/** Where a connection was headed: its host (a name or an address) and port. */
export interface ConnectTarget {
  host: string;
  port: unknown;
}

/** The host and port a call of `Socket.prototype.connect` names, as net reads its arguments; undefined for a Unix socket. */
export function connectTarget(args: readonly unknown[]): ConnectTarget | undefined {
  // net.connect passes its arguments on normalized: [[options, callback]].
  const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: unknown; port?: unknown; path?: unknown };
    if (options.path !== undefined && options.path !== null) return undefined;
    return { host: typeof options.host === 'string' && options.host !== '' ? options.host : 'localhost', port: options.port };
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return { host: typeof second === 'string' && second !== '' ? second : 'localhost', port: first };
  }
  return undefined;
}

/** Whether `host` is this machine's loopback: 127.0.0.0/8, ::1 (IPv4-mapped included), or `localhost` and its subdomains (RFC 6761). */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  switch (isIP(bare)) {
    case 4:
      return bare.startsWith('127.');
    case 6:
      return /^(0{0,4}:){2,7}0{0,3}1$/.test(bare) || bare.startsWith('::ffff:127.');
    default:
      return bare === 'localhost' || bare.endsWith('.localhost');
  }
}

interface Guard {
  /** Connections refused since the last check, as `host:port`, each with where it was opened. */
  refused: { where: string; stack: string }[];
}

const INSTALLED = Symbol.for('bank-subgraph.loopback-guard');

/** Guards `Socket.prototype.connect` once per worker (setup files run again for each file it runs). */
function installGuard(): Guard {
  const holder = globalThis as { [INSTALLED]?: Guard };
  if (holder[INSTALLED]) return holder[INSTALLED];
  const guard: Guard = { refused: [] };
  // oxlint-disable-next-line typescript/unbound-method -- called below with the socket as `this`
  const connect = Socket.prototype.connect as (this: Socket, ...args: unknown[]) => Socket;
  const guarded = function (this: Socket, ...args: unknown[]): Socket {
    const target = connectTarget(args);
    if (target === undefined || isLoopback(target.host)) return connect.apply(this, args);
    const where = `${target.host}:${String(target.port)}`;
    // Made here, so its stack shows who connected.
    const refusal = new Error(`loopback guard: refused a connection to ${where}: the test suite reaches nothing past loopback`);
    guard.refused.push({ where, stack: refusal.stack ?? '' });
    // Failed as a refused connection fails: an 'error', then 'close', on the next tick.
    process.nextTick(() => this.destroy(refusal));
    return this;
  };
  Socket.prototype.connect = guarded;
  holder[INSTALLED] = guard;
  return guard;
}

const guard = installGuard();

/** Fails the running hook's test (or file) when a connection past loopback was refused since the last check. */
function failOnRefused(): void {
  const refused = guard.refused.splice(0);
  if (refused.length === 0) return;
  const error = new Error(
    `connected past loopback to ${refused.map((entry) => entry.where).join(', ')}: the test suite reaches nothing past loopback ` +
      `(APOLLO_TELEMETRY_DISABLED=true, every service on 127.0.0.1)`,
  );
  error.stack = `${error.message}\n${refused.map((entry) => entry.stack).join('\n')}`;
  throw error;
}

afterEach(failOnRefused);
afterAll(failOnRefused);

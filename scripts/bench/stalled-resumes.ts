// Stalled resumes: what subscribers that stop reading cost the server. Ours alone, in a process of
// its own on a SQLite file holding N notifications: its memory (after a forced GC) with S idle live
// subscribers, then with S subscribers resuming from the first notification whose clients never read
// a byte; then 1,001 new notifications (one more than the waiting limit), after which each stalled
// one should be closed with 1013 and counted once. The clients run here, in the orchestrator: only
// the server's figures are measured, and a client that reads nothing costs nothing to run.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import WebSocket from 'ws';
import { createNotificationBodies, deliver } from './bank.ts';
import { GRAPHQL_PATH, query } from './graphql.ts';
import type { MemorySample } from './monitors.ts';
import { table } from './report.ts';
import { startTarget, type Target } from './targets.ts';

/** One more than the documented waiting limit (docs/http-api.md): enough to end every stalled subscriber. */
const NEW_NOTIFICATIONS = 1_001;
const SIZES = { full: { subscribers: 200, stored: 50_000 }, quick: { subscribers: 20, stored: 8_000 } };
/** Webhook posts in flight while filling the store. */
const SEED_CONCURRENCY = 50;
/** How long the stalled replays may take to come to rest, and the closes to arrive. */
const SETTLE_TIMEOUT_MS = 180_000;
const CLOSE_TIMEOUT_MS = 60_000;
/** Every field, the bank's raw body included: about 1 KB a frame, so a socket's buffers fill in a few thousand. */
const SUBSCRIPTION = `subscription($after: String) { incomingTransfer(after: $after) {
  settlementId sessionId accountNumber transactionAmount settledAmount feeAmount vatAmount currency narration
  sourceAccountName sourceBankName transactionTime receivedAt cursor rawBody } }`;
/** Longer than the run: the waiting limit, not the keep-alive, is what this run watches end them. */
const KEEP_ALIVE_MS = 15 * 60_000;

export interface StalledResumes {
  subscribers: number;
  stored: number;
  /** MiB after a forced GC: no subscriber, the idle ones live, the stalled ones at rest. */
  memory: { none: MemorySample; idle: MemorySample; stalled: MemorySample };
  /** Highest RSS and heap sampled while the stalled ones replayed and came to rest. */
  peak: MemorySample;
  /** Notifications each stalled subscriber was sent before its socket stopped taking them (mean). */
  replayedEach: number;
  /** Notifications waiting for the stalled subscribers, all together, once at rest. */
  waiting: number;
  /** Seconds from the first stalled subscribe to rest. */
  settleSeconds: number;
  /** After the new notifications: close codes the stalled clients saw (1013 expected for all). */
  closes: Record<string, number>;
  endedEarly: number;
}

/** Runs the scenario against a fresh process of ours; `dir` holds its SQLite file. */
export async function measureStalledResumes(options: { quick: boolean; dir: string }): Promise<StalledResumes> {
  const { subscribers, stored } = options.quick ? SIZES.quick : SIZES.full;
  const dir = mkdtempSync(join(options.dir, 'bank-subgraph-stalled-'));
  const env = {
    UPSTREAM_MODE: 'sandbox',
    STORE_URL: `sqlite:${join(dir, 'collections.db')}`,
    PUBSUB_URL: 'memory:',
    LOG_LEVEL: 'silent',
    // The keep-alive would end the first stalled clients (with 1013) before the last ones are at rest.
    BENCH_KEEPALIVE_MS: String(KEEP_ALIVE_MS),
  };
  let target: Target | undefined;
  const clients: RawClient[] = [];
  try {
    target = await startTarget('app', 'ours (stalled resumes)', env);
    const server = target;
    const after = await fill(server.baseUrl, stored);
    const none = await server.call('memory');

    clients.push(...(await openClients(server.baseUrl, subscribers, {})));
    await until(async () => (await server.call('subscriptions')) === subscribers, 'idle subscribers live');
    const idle = await server.call('memory');
    for (const client of clients.splice(0)) client.socket.terminate();
    await until(async () => (await server.call('subscriptions')) === 0, 'idle subscribers gone');

    await server.call('begin');
    const started = performance.now();
    clients.push(...(await openClients(server.baseUrl, subscribers, { after, stall: true })));
    const rest = await atRest(server.baseUrl);
    const settleSeconds = (performance.now() - started) / 1000;
    const stalled = await server.call('memory');
    const { peak } = await server.call('end');

    await post(server.baseUrl, NEW_NOTIFICATIONS);
    await until(async () => (await metric(server.baseUrl, 'graphql_subscriptions_ended_early_total')) >= subscribers, 'ends', CLOSE_TIMEOUT_MS).catch(() => undefined);
    const closes = await closeCodes(clients);
    const endedEarly = await metric(server.baseUrl, 'graphql_subscriptions_ended_early_total');
    return { subscribers, stored, memory: { none, idle, stalled }, peak, replayedEach: rest.replayed / subscribers, waiting: rest.waiting, settleSeconds, closes, endedEarly };
  } finally {
    for (const client of clients) client.socket.terminate();
    await target?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The scenario's table: memory of each phase, the ratio to the idle one, and how the stalled ones ended. */
export function stalledResumesTable(r: StalledResumes): string {
  const mib = (value: number) => value.toFixed(0);
  const ratio = (key: keyof MemorySample) => r.memory.stalled[key] / r.memory.idle[key];
  const closedWith1013 = r.closes['1013'] ?? 0;
  const rows = [
    ['no subscriber', mib(r.memory.none.rss), mib(r.memory.none.heapUsed), ''],
    [`${r.subscribers} idle live subscribers`, mib(r.memory.idle.rss), mib(r.memory.idle.heapUsed), ''],
    [`${r.subscribers} stalled resumes, at rest`, mib(r.memory.stalled.rss), mib(r.memory.stalled.heapUsed), `peak while replaying: ${mib(r.peak.rss)} / ${mib(r.peak.heapUsed)}`],
    ['stalled / idle', `${ratio('rss').toFixed(2)}×`, `${ratio('heapUsed').toFixed(2)}×`, `target ≤ 1.2× rss: ${ratio('rss') <= 1.2 ? 'yes' : 'NO'}`],
  ];
  const closes = Object.entries(r.closes).map(([code, n]) => `${code} ×${n}`).join(', ') || 'none';
  return [
    `${r.subscribers} subscribers resuming from the first of ${r.stored.toLocaleString('en')} stored notifications, their clients reading nothing`,
    '',
    table(['memory after GC', 'rss MiB', 'heap MiB', ''], rows),
    '',
    `each was sent ${r.replayedEach.toFixed(0)} notifications before its socket stopped taking them; then its replay stopped reading the store`,
    `(at rest after ${r.settleSeconds.toFixed(1)} s, ${r.waiting} notifications waiting for them in all).`,
    `After ${NEW_NOTIFICATIONS.toLocaleString('en')} new notifications: ${closedWith1013} of ${r.subscribers} closed with 1013 (${closes}); ` +
      `graphql_subscriptions_ended_early_total ${r.endedEarly}; target: all ${closedWith1013 === r.subscribers ? 'yes' : 'NO'}.`,
  ].join('\n');
}

/** Stores `count` notifications through the webhook; the cursor of the first. */
async function fill(baseUrl: string, count: number): Promise<string> {
  const next = createNotificationBodies();
  const first = next();
  if ((await deliver(baseUrl, first.body)) !== '00') throw new Error('the first notification was not stored');
  await post(baseUrl, count - 1, next);
  const data = await query(baseUrl, `{ collectionNotification(settlementId: "${first.settlementId}") { cursor } }`);
  return data.collectionNotification.cursor as string;
}

/** Posts `count` new notifications, SEED_CONCURRENCY at a time; every one must be stored (00). */
async function post(baseUrl: string, count: number, next = createNotificationBodies()): Promise<void> {
  let left = count;
  const worker = async () => {
    while (left > 0) {
      left -= 1;
      const outcome = await deliver(baseUrl, next().body);
      if (outcome !== '00') throw new Error(`the webhook answered ${outcome}`);
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
}

interface RawClient {
  socket: WebSocket;
  closed: Promise<number>;
}

/**
 * Opens `count` graphql-transport-ws clients, 50 at a time, each with one incomingTransfer
 * subscription (resuming `after` a cursor when given); a stalled one stops reading its socket right
 * after subscribing, as a hung client would.
 */
async function openClients(baseUrl: string, count: number, options: { after?: string; stall?: boolean }): Promise<RawClient[]> {
  const clients: RawClient[] = [];
  for (let start = 0; start < count; start += 50) {
    const batch = Array.from({ length: Math.min(50, count - start) }, () => openClient(baseUrl, options));
    clients.push(...(await Promise.all(batch)));
  }
  return clients;
}

function openClient(baseUrl: string, options: { after?: string; stall?: boolean }): Promise<RawClient> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${GRAPHQL_PATH}`, 'graphql-transport-ws', { skipUTF8Validation: true });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    // Closed before its connection_ack (e.g. 4408, init not read in time): the run fails, saying so, rather than wait forever.
    const closedEarly = (code: number, reason: Buffer) => reject(new Error(`a subscriber was closed before its connection_ack: ${code} ${reason.toString()}`));
    socket.once('close', closedEarly);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
    socket.once('message', () => {
      socket.off('close', closedEarly);
      // connection_ack (nothing else comes before it)
      socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION, variables: { after: options.after ?? null } } }));
      if (options.stall) (socket as unknown as { _socket: Socket })._socket.pause();
      socket.on('error', () => undefined);
      resolve({ socket, closed });
    });
  });
}

/**
 * Waits until the stalled replays have come to rest: every subscription live and the replayed count
 * unchanged for a second (their sockets take nothing more, so their replays read nothing more).
 */
async function atRest(baseUrl: string): Promise<{ replayed: number; waiting: number }> {
  let last = -1;
  for (const deadline = Date.now() + SETTLE_TIMEOUT_MS; Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const replayed = await metric(baseUrl, 'graphql_subscription_events_total{source="replay"}');
    if (replayed === last) return { replayed, waiting: await metric(baseUrl, 'graphql_subscription_notifications_waiting') };
    last = replayed;
  }
  throw new Error(`the stalled replays did not come to rest within ${SETTLE_TIMEOUT_MS / 1000} s`);
}

/** Lets every client read again, and tallies the close codes they see (or "open" after the time-out). */
async function closeCodes(clients: RawClient[]): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('still open'), CLOSE_TIMEOUT_MS).unref());
  await Promise.all(
    clients.map(async (client) => {
      (client.socket as unknown as { _socket: Socket })._socket.resume();
      const code = String(await Promise.race([client.closed, timeout]));
      codes[code] = (codes[code] ?? 0) + 1;
    }),
  );
  return codes;
}

/** A series of the server's /metrics (name and labels exactly as exported); 0 when absent. */
async function metric(baseUrl: string, series: string): Promise<number> {
  const response = await request(`${baseUrl}/metrics`);
  const line = (await response.body.text()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = SETTLE_TIMEOUT_MS): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (await check()) return;
  }
  throw new Error(`timed out waiting for ${what}`);
}

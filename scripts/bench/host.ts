// The bench's side of every server process it measures (the project's and each floor): listens, says
// where, and answers the orchestrator's calls (measurements, memory after GC, live subscriptions).
// Started without an IPC channel (the cold start spawns a floor as a plain process), it only listens.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMonitors, sampleMemory } from './monitors.ts';
import type { HostCall, HostCalls, HostMessage, HostRequest } from './protocol.ts';
import type { BatchTimer } from './batch-times.ts';

export interface HostedServer {
  /** Starts listening on `port` (0: any) on 127.0.0.1; resolves to its origin, e.g. http://127.0.0.1:41234. */
  listen(port: number): Promise<string>;
  /** Subscriptions live now (0 where the server has none). */
  subscriptions(): number | Promise<number>;
  close(): Promise<void>;
  /** The project's store's batch writes, timed (floors have none to report). */
  batches?: BatchTimer;
}

/**
 * A floor's bare node:http server as a bench target: listens on loopback; on close, `stopping` runs
 * first (end what outlives an HTTP request, such as WebSockets), then every connection is closed,
 * then `closed` (release what requests used, such as a store).
 */
export function hostHttpServer(
  server: Server,
  extra: { subscriptions?: () => number; stopping?: () => void; closed?: () => unknown } = {},
): Promise<void> {
  return hostForBench({
    listen: (port) =>
      new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    subscriptions: extra.subscriptions ?? (() => 0),
    async close() {
      extra.stopping?.();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await extra.closed?.();
    },
  });
}

/** Runs `server` as a bench target: listens on PORT (0 by default) and serves the orchestrator's calls. */
export async function hostForBench(server: HostedServer): Promise<void> {
  const baseUrl = await server.listen(Number(process.env.PORT ?? 0));
  if (!process.send) return;
  const monitors = startMonitors(server.batches);
  const answer = async (call: HostCall): Promise<HostCalls[HostCall]> => {
    switch (call) {
      case 'begin':
        monitors.begin();
        return null;
      case 'end':
        return monitors.end();
      case 'memory':
        return memoryAfterGc();
      case 'subscriptions':
        return server.subscriptions();
      case 'close':
        monitors.stop();
        await server.close();
        return null;
    }
  };
  process.on('message', (request: HostRequest) => {
    answer(request.call).then(
      (value) => send({ type: 'reply', id: request.id, value }, request.call === 'close'),
      (error: unknown) => send({ type: 'reply', id: request.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  // The orchestrator is gone (Ctrl-C, a crash): nobody is left to measure for.
  process.on('disconnect', () => process.exit(1));
  send({ type: 'listening', baseUrl });
}

function send(message: HostMessage, thenExit = false): void {
  process.send!(message, undefined, {}, () => {
    if (thenExit) process.exit(0);
  });
}

/**
 * Memory after a forced GC, so only what is still referenced counts (needs --expose-gc). A last-resort
 * GC also hands back the heap pages V8 keeps pooled after a busy moment, which RSS would otherwise
 * show long after the objects on them died: what the process holds, not its high-water mark.
 */
async function memoryAfterGc() {
  const gc = (globalThis as { gc?: (options?: { type: string; execution: string; flavor: string }) => void }).gc;
  // Let closing sockets and finished requests drop their last references first.
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return sampleMemory();
}

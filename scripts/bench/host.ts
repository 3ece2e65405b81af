// The bench's side of every server process it measures (ours and each floor): listens, says where,
// and answers the orchestrator's calls over IPC (protocol.ts, HostCalls).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { HostCall, HostCalls, HostMessage, MemorySample } from './protocol.ts';

export interface HostedServer {
  /** Listens on `port` (0: any) on loopback; resolves to its origin. */
  listen(port: number): Promise<string>;
  subscriptions(): number | Promise<number>;
  close(): Promise<void>;
}

const memory = (): MemorySample => ({ rss: process.memoryUsage().rss / 2 ** 20, heapUsed: process.memoryUsage().heapUsed / 2 ** 20 });
const higher = (a: MemorySample, b: MemorySample): MemorySample => ({
  rss: Math.max(a.rss, b.rss),
  heapUsed: Math.max(a.heapUsed, b.heapUsed),
});

/** Runs `server` as a bench target: listens on PORT and answers the orchestrator. */
export async function hostForBench(server: HostedServer): Promise<void> {
  const baseUrl = await server.listen(Number(process.env.PORT ?? 0));
  if (!process.send) return;
  // The delay monitor's own 5 ms interval is in every sample.
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const late = (ns: number) => Math.max(ns / 1e6 - 5, 0);
  let start = { elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), at: performance.now() };
  let peak = memory();
  setInterval(() => (peak = higher(peak, memory())), 100).unref();
  const calls: { [C in HostCall]: () => Promise<HostCalls[C]> | HostCalls[C] } = {
    begin: () => {
      loop.reset();
      peak = memory();
      start = { elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), at: performance.now() };
      return null;
    },
    end: () => {
      const cpu = process.cpuUsage(start.cpu);
      return {
        loopDelayMs: { p99: late(loop.percentile(99)), max: late(loop.max) },
        loopUtilization: performance.eventLoopUtilization(start.elu).utilization,
        cpuCores: (cpu.user + cpu.system) / 1000 / (performance.now() - start.at),
        peak: higher(peak, memory()),
      };
    },
    // After a last-resort GC (--expose-gc): only what is referenced, and the heap pages V8 keeps
    // pooled after a busy moment handed back, so RSS is what the process holds. Closing sockets
    // and finished requests drop their last references first.
    memory: async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      (globalThis as { gc?: (options: object) => void }).gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      return memory();
    },
    subscriptions: () => server.subscriptions(),
    close: async () => (await server.close(), null),
  };
  const send = (message: HostMessage, then?: () => void) => process.send!(message, undefined, {}, then);
  process.on('message', ({ id, call }: { id: number; call: HostCall }) => {
    Promise.resolve()
      .then(() => calls[call]())
      .then(
        (value) => send({ type: 'reply', id, value }, call === 'close' ? () => process.exit(0) : undefined),
        (error: unknown) => send({ type: 'reply', id, error: String(error instanceof Error ? error.message : error) }),
      );
  });
  // The orchestrator is gone (Ctrl-C, a crash): nobody is left to measure for.
  process.on('disconnect', () => process.exit(1));
  send({ type: 'listening', baseUrl });
}

/** A floor's node:http server as a bench target; `stopping` ends what outlives a request, `closed` releases the rest. */
export function hostHttpServer(
  server: Server,
  extra: { subscriptions?: () => number; stopping?: () => void; closed?: () => unknown } = {},
) {
  return hostForBench({
    listen: (port) =>
      new Promise((resolve) =>
        server.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    subscriptions: extra.subscriptions ?? (() => 0),
    async close() {
      extra.stopping?.();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await extra.closed?.();
    },
  });
}

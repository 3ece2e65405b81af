import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SHUTDOWN_BUDGET_MS } from '../src/shutdown.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { runSubgraphToFailure, startSubgraphProcess } from './helpers/process.ts';

/** A port held by a listener of the test's own on 127.0.0.1 until the test finishes, as another instance would hold it. */
async function takenPort(): Promise<number> {
  const holder = createServer();
  holder.listen(0, '127.0.0.1');
  await once(holder, 'listening');
  onCleanup(() => new Promise((resolve) => holder.close(resolve)));
  return (holder.address() as AddressInfo).port;
}

describe('a stop, whatever the log output does', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s ends the process with 0 within the budget when the reader of its stdout has gone (npm start | head)',
    async (signal) => {
      const subgraph = await startSubgraphProcess();
      // The reader reads the first lines and goes, as `head -2` does: every later write meets EPIPE.
      subgraph.child.stdout!.destroy();
      subgraph.child.stderr!.destroy();

      const signalled = performance.now();
      subgraph.child.kill(signal);
      const { code, signal: killedBy } = await subgraph.exited;
      expect({ code, signal: killedBy }).toEqual({ code: 0, signal: null });
      expect(performance.now() - signalled).toBeLessThan(SHUTDOWN_BUDGET_MS);
    },
    SHUTDOWN_BUDGET_MS + 15_000,
  );
});

describe('a port already in use', () => {
  it.each(['PORT', 'WEBHOOK_PORT'] as const)(
    'is one line naming %s and its port, saying another instance may hold it, and exit 1',
    async (variable) => {
      const port = await takenPort();
      const { code, output } = await runSubgraphToFailure({ [variable]: String(port) });
      expect(code).toBe(1);
      const lines = output.trim().split('\n');
      const refusal = lines.filter((line) => line.includes('could not start'));
      expect(refusal).toHaveLength(1);
      const entry = JSON.parse(refusal[0]!) as Record<string, unknown>;
      expect(entry).toMatchObject({ level: 60, port, variable });
      expect(entry.msg).toBe(
        `bank subgraph could not start: port ${port} (${variable}) on 127.0.0.1 is already in use: ` +
          `another instance may hold it (stop it, or set ${variable} to a free port)`,
      );
      // No stack, no error object: the one line says it all.
      expect(entry).not.toHaveProperty('err');
      expect(output).not.toMatch(/\n\s+at /);
    },
  );
});

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { onCleanup } from './cleanup.ts';
import { testStoreUrl } from './stores.ts';
import { Inbox } from './wait.ts';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');

export interface SubgraphProcess {
  child: ChildProcess;
  /** e.g. http://127.0.0.1:41234 (the GraphQL endpoint is at /graphql). */
  baseUrl: string;
  /** Every log line so far, parsed (pino JSON); `logs.first(match)` waits for one. */
  logs: Inbox<Record<string, unknown>>;
  /** Every line of stdout and stderr so far, as text. */
  output: string[];
  /** Resolves with the exit code (or the signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `src/main.ts` as `npm start` would, with `env` on top of a clean test environment (port 0,
 * loopback, a test store), and resolves once it logs where it listens. Killed after the test,
 * or by whatever `register` is given (a process shared by a describe block).
 */
export async function startSubgraphProcess(
  env: Record<string, string> = {},
  cwd?: string,
  { register = onCleanup }: { register?: (stop: () => Promise<void>) => void } = {},
): Promise<SubgraphProcess> {
  const child = spawn(process.execPath, [MAIN], {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', STORE_URL: testStoreUrl(env), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  register(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });

  const logs = new Inbox<Record<string, unknown>>();
  const output: string[] = [];
  const listening = Promise.withResolvers<string>();
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (typeof entry.url === 'string' && entry.msg?.toString().includes('listening')) listening.resolve(entry.url);
      } catch {
        // Not a log line (a config error is printed as plain text).
      }
    });
  }
  void exited.then(({ code, signal }) =>
    listening.reject(new Error(`subgraph exited (${code ?? signal}) before listening:\n${output.join('\n')}`)),
  );
  const url = await listening.promise;
  return { child, baseUrl: url.replace('localhost', '127.0.0.1').replace(/\/graphql$/, ''), logs, output, exited };
}

/** Runs `src/main.ts` expecting it to fail to start; resolves with its exit code and output. */
export async function runSubgraphToFailure(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', STORE_URL: testStoreUrl(env), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

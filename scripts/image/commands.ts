// The machine's tools (podman, debootstrap, tar) as the image test runs them: to their end, their
// output kept for the report of a failure, and never through a shell.
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  /** Streamed to the command's stdin (a tar of a root filesystem, say). */
  input?: Readable;
  /** Resolve with a non-zero exit code instead of rejecting. */
  allowFailure?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Runs `command` with `args`; rejects, quoting the end of its output, unless it exits 0 or `allowFailure`. */
export function run(command: string, args: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    if (options.input) options.input.pipe(child.stdin!);
    child.on('error', reject);
    child.on('close', (code) => {
      const result = { code: code ?? 1, stdout, stderr };
      if (result.code === 0 || options.allowFailure) return resolve(result);
      reject(new CommandError(command, args, result));
    });
  });
}

/** A command that failed: its line, exit code and the last lines of what it printed. */
export class CommandError extends Error {
  readonly result: CommandResult;
  constructor(command: string, args: readonly string[], result: CommandResult) {
    super(`${[command, ...args].join(' ')} exited ${result.code}:\n${tail(`${result.stdout}\n${result.stderr}`, 40)}`);
    this.name = 'CommandError';
    this.result = result;
  }
}

/** The last `lines` lines of `text`. */
export function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Whether `command` is on the PATH. */
export async function installed(command: string): Promise<boolean> {
  const { code } = await run('sh', ['-c', `command -v "$0" >/dev/null`, command], { allowFailure: true });
  return code === 0;
}

import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

type LogEntry = Record<string, unknown>;

/**
 * A logger whose JSON lines land in `logs`, for an app's `logger` override; `logged(match)` resolves
 * with the first line that matches, once it is written.
 */
export function captureLogs(level: pino.Level = 'info'): {
  logger: Logger;
  logs: LogEntry[];
  logged(match: (entry: LogEntry) => boolean): Promise<LogEntry>;
} {
  const logs: LogEntry[] = [];
  let waiters: { match: (entry: LogEntry) => boolean; resolve: (entry: LogEntry) => void }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const entry = JSON.parse(chunk.toString('utf8')) as LogEntry;
      logs.push(entry);
      waiters = waiters.filter((waiter) => (waiter.match(entry) ? (waiter.resolve(entry), false) : true));
      done();
    },
  });
  const logged = (match: (entry: LogEntry) => boolean) => {
    const found = logs.find(match);
    return found ? Promise.resolve(found) : new Promise<LogEntry>((resolve) => waiters.push({ match, resolve }));
  };
  return { logger: pino({ level }, sink), logs, logged };
}

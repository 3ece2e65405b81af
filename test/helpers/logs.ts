import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A logger whose JSON lines land in `logs`, for an app's `logger` override. */
export function captureLogs(level: pino.Level = 'info'): { logger: Logger; logs: Record<string, unknown>[] } {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, sink), logs };
}

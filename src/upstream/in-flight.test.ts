import { describe, expect, it } from 'vitest';
import { createInFlight } from './in-flight.ts';

describe('createInFlight', () => {
  it('gives callers of a pending key the same call, and counts those who joined', async () => {
    let joined = 0;
    const flights = createInFlight(() => (joined += 1));
    const answer = Promise.withResolvers<string>();
    let started = 0;
    const start = () => {
      started += 1;
      return answer.promise;
    };
    const calls = [flights.share('a', start), flights.share('a', start), flights.share('a', start)];
    expect(started).toBe(1);
    expect(joined).toBe(2);
    answer.resolve('record');
    expect(await Promise.all(calls)).toEqual(['record', 'record', 'record']);
  });

  it('keeps different keys apart', async () => {
    const flights = createInFlight();
    const [a, b] = await Promise.all([flights.share('a', async () => 'A'), flights.share('b', async () => 'B')]);
    expect([a, b]).toEqual(['A', 'B']);
  });

  it('shares a failure with those who waited, then forgets it: the next caller starts afresh', async () => {
    const flights = createInFlight();
    const failure = Promise.withResolvers<string>();
    const first = flights.share('a', () => failure.promise);
    const second = flights.share('a', async () => 'never started');
    failure.reject(new Error('bank down'));
    await expect(first).rejects.toThrow('bank down');
    await expect(second).rejects.toThrow('bank down');
    await expect(flights.share('a', async () => 'fresh')).resolves.toBe('fresh');
  });

  it('caches nothing past the flight', async () => {
    const flights = createInFlight();
    let calls = 0;
    await flights.share('a', async () => (calls += 1));
    await flights.share('a', async () => (calls += 1));
    expect(calls).toBe(2);
  });
});

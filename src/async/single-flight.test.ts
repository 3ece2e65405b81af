import { describe, expect, it } from 'vitest';
import { createSingleFlight, singleFlight } from './single-flight.ts';

describe('createSingleFlight', () => {
  it('gives callers of a pending key the same call, and counts those who joined', async () => {
    let joined = 0;
    const flights = createSingleFlight(() => (joined += 1));
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
    let joined = 0;
    const flights = createSingleFlight(() => (joined += 1));
    const [a, b] = await Promise.all([flights.share('a', async () => 'A'), flights.share('b', async () => 'B')]);
    expect([a, b]).toEqual(['A', 'B']);
    expect(joined).toBe(0);
  });

  it('shares a failure with those who waited, then forgets it: the next caller starts afresh', async () => {
    const flights = createSingleFlight();
    const failure = Promise.withResolvers<string>();
    const first = flights.share('a', () => failure.promise);
    const second = flights.share('a', async () => 'never started');
    failure.reject(new Error('bank down'));
    await expect(first).rejects.toThrow('bank down');
    await expect(second).rejects.toThrow('bank down');
    await expect(flights.share('a', async () => 'fresh')).resolves.toBe('fresh');
  });

  it('caches nothing past the flight', async () => {
    const flights = createSingleFlight();
    let calls = 0;
    await flights.share('a', async () => (calls += 1));
    await flights.share('a', async () => (calls += 1));
    expect(calls).toBe(2);
  });
});

describe('singleFlight', () => {
  it('gives every call while one is pending that same promise, and starts once', async () => {
    const answer = Promise.withResolvers<string>();
    let started = 0;
    const measure = singleFlight(() => {
      started += 1;
      return answer.promise;
    });
    const calls = [measure(), measure(), measure()];
    expect(started).toBe(1);
    answer.resolve('size');
    expect(await Promise.all(calls)).toEqual(['size', 'size', 'size']);
  });

  it('shares a failure with those who waited, then starts afresh', async () => {
    const outcomes = [Promise.withResolvers<string>(), Promise.withResolvers<string>()];
    let started = 0;
    const measure = singleFlight(() => outcomes[started++]!.promise);
    const [first, second] = [measure(), measure()];
    outcomes[0]!.reject(new Error('store down'));
    await expect(first).rejects.toThrow('store down');
    await expect(second).rejects.toThrow('store down');
    const third = measure();
    outcomes[1]!.resolve('back');
    await expect(third).resolves.toBe('back');
    expect(started).toBe(2);
  });
});

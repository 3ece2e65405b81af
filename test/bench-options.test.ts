import { describe, expect, it } from 'vitest';
import { readOptions } from '../scripts/bench/options.ts';

describe('the bench options', () => {
  it('runs on SQLite by default, takes --store postgres, and refuses any other store by name', () => {
    expect(readOptions([]).store).toBe('sqlite');
    expect(readOptions(['--store', 'postgres']).store).toBe('postgres');
    expect(() => readOptions(['--store', 'mysql'])).toThrow(/--store must be sqlite or postgres, got "mysql"/);
  });

  it('takes --rows for the growth mode, at least 2,000, and alone', () => {
    expect(readOptions([]).rows).toBeUndefined();
    expect(readOptions(['--rows', '1000000']).rows).toBe(1_000_000);
    expect(() => readOptions(['--rows', '1999'])).toThrow(/--rows must be a whole number from 2000/);
    expect(() => readOptions(['--rows', '1e6'])).toThrow(/--rows/);
    expect(() => readOptions(['--rows', '5000', '--only', 'webhook-00'])).toThrow(/--rows runs the growth mode alone/);
  });

  it('selects scenarios with --only, the read storm and the worst raw-body read among them, and names an unknown one', () => {
    expect(readOptions(['--only', 'read-storm,webhook-00']).selected).toEqual(['webhook-00', 'read-storm']);
    expect(readOptions(['--only', 'raw-bodies']).selected).toEqual(['raw-bodies']);
    expect(() => readOptions(['--only', 'cold-start'])).toThrow(
      /--only must name scenarios among .*read-storm, raw-bodies, confirmation; got "cold-start"/,
    );
  });

  it('makes --quick short, and lets the options given win over it', () => {
    expect(readOptions(['--quick'])).toMatchObject({
      durationS: 0.5,
      warmupS: 0,
      connections: 10,
      rounds: 1,
      subscribers: [50],
      events: 5,
    });
    expect(readOptions(['--quick', '--subscribers', '100,200']).subscribers).toEqual([100, 200]);
  });
});

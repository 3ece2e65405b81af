import { describe, expect, it } from 'vitest';
import { readOptions } from '../scripts/bench/options.ts';

describe('the bench options for stores and growth', () => {
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

  it('keeps --tracing to the SQLite run', () => {
    expect(() => readOptions(['--tracing', '--store', 'postgres'])).toThrow(/--tracing measures the SQLite run/);
  });

  it('takes --insert-cost alone, with fewer rows under --quick', () => {
    expect(readOptions([]).insertCost).toBe(false);
    expect(readOptions(['--insert-cost'])).toMatchObject({ insertCost: true, insertCostRows: 50_000 });
    expect(readOptions(['--insert-cost', '--quick', '--store', 'postgres'])).toMatchObject({ insertCost: true, insertCostRows: 500, store: 'postgres' });
    for (const other of [['--rows', '5000'], ['--only', 'webhook-00'], ['--tracing']]) {
      expect(() => readOptions(['--insert-cost', ...other])).toThrow(/--insert-cost runs alone/);
    }
  });

  it('takes --floor-row floor (the default) or ours, and not with the modes that have no floor', () => {
    expect(readOptions([]).floorRow).toBe('floor');
    expect(readOptions(['--floor-row', 'ours', '--only', 'webhook-00']).floorRow).toBe('ours');
    expect(() => readOptions(['--floor-row', 'theirs'])).toThrow(/--floor-row must be floor or ours, got "theirs"/);
    for (const other of [['--rows', '5000'], ['--insert-cost']]) {
      expect(() => readOptions(['--floor-row', 'ours', ...other])).toThrow(/--floor-row changes the webhook's floors/);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { readOptions } from '../scripts/bench/options.ts';
import { median, type ScenarioReport } from '../scripts/bench/suite.ts';

function run(perSecond: number, errors = 0, failure?: string): ScenarioReport {
  return {
    scenario: 'webhook-00',
    load: '100 conn × 5 s',
    count: perSecond * 5,
    seconds: 5,
    perSecond,
    latencyMs: { p50: 1000 / perSecond, p90: 0, p99: 0, max: 0 },
    errors,
    outcomes: { '00': perSecond * 5 },
    loadCpuCores: 0.5,
    side: 'ours',
    target: 'ours',
    subscribers: undefined,
    perSubscriberKB: undefined,
    servers: [],
    failure,
  };
}

describe('the bench rounds', () => {
  it('reports the median run of each side, by throughput', () => {
    expect(median([run(900), run(1200), run(600)]).perSecond).toBe(900);
    expect(median([run(900), run(600)]).perSecond).toBe(600); // the lower middle of an even count
    expect(median([run(700)]).perSecond).toBe(700);
  });

  it('keeps the errors of every round and a failure, so a wrong reply in any round shows', () => {
    const reported = median([run(900, 0), run(1200, 3), run(0, 0, 'load process exited'), run(800, 1)]);
    expect(reported.perSecond).toBe(800);
    expect(reported.errors).toBe(4);
    expect(reported.failure).toBe('load process exited');
  });

  it('takes --rounds, 3 by default and 1 in quick mode, and refuses a bad count by name', () => {
    expect(readOptions([]).rounds).toBe(3);
    expect(readOptions(['--quick']).rounds).toBe(1);
    expect(readOptions(['--quick', '--rounds', '5']).rounds).toBe(5);
    expect(() => readOptions(['--rounds', '0'])).toThrow(/--rounds/);
  });
});

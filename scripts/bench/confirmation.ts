// Confirmation with the bank: what it costs the webhook, and how fast it confirms. Ours twice, each on
// a store of its own and with the same bank stand-in (collection-bank.ts, a process of its own, that
// holds every notification the bench sends): once with COLLECTION_CONFIRMATION on, once off. First
// the time from 00 to arrival on incomingTransfer(confirmed: true) at a fixed rate; then webhook 00 at
// full speed, on and off taking turns, each on-round followed by the drain of what it left PENDING
// (before the next round, so the drain takes no CPU from it). Last, the pace against a bank that
// answers each ask in 200 ms: one replica, and on PostgreSQL two on one store.
import { loadavg } from 'node:os';
import type { BenchOptions } from './options.ts';
import { metric } from './graphql.ts';
import { above, atLeast, atMost, ms, row, whole, type Row } from './report.ts';
import { appEnv, ownStore, type Services, type StoreKind } from './stores.ts';
import { describe, median, runOnServers, type ScenarioReport } from './suite.ts';
import { startTarget, type Target } from './targets.ts';

/**
 * Deliveries per second of the latency run: well below what the webhook takes, where confirmation
 * keeps pace with what arrives.
 */
const LATENCY_RATE = { full: 400, quick: 50 };
/** The longest a drain may take: past it the run fails rather than wait forever. */
const DRAIN_TIMEOUT_MS = 600_000;
const CONFIRMED = 'collection_confirmations_total{outcome="CONFIRMED"}';
/** The slow bank's answer time, and the rate the pace run posts at: more than one replica can confirm from it. */
const SLOW_BANK_MS = 200;
const SLOW_BANK_RATE = { full: 300, quick: 100 };
/** What one replica confirms a second at least against that bank. */
const SLOW_BANK_TARGET = 50;
const ACCEPTED = 'collection_webhook_replies_total{response_code="00",reason="accepted"}';

/** Confirmations per second, during a webhook run and in the drain after it. */
interface Pace {
  during: number;
  draining: number;
}

/** Runs the scenario on a store of `kind`; the rows, and every run's report. */
export async function confirmationBench(
  options: BenchOptions,
  kind: StoreKind,
  parentDir: string,
  services?: Services,
): Promise<{ rows: Row[]; reports: ScenarioReport[] }> {
  const say = (line: string) => process.stderr.write(`[${kind} confirmation] ${line}\n`);
  const pubsub = services?.redisUrl ?? 'memory:';
  const stores = [await ownStore(kind, parentDir, services?.databaseUrl), await ownStore(kind, parentDir, services?.databaseUrl)];
  const targets: Target[] = [];
  try {
    const bank = await startTarget('collection-bank', 'bank stand-in');
    targets.push(bank);
    const ours = (confirmation: 'on' | 'off', storeUrl: string) =>
      startTarget('app', `ours, confirmation ${confirmation}`, {
        ...appEnv(storeUrl, pubsub),
        COLLECTION_CONFIRMATION: confirmation,
        BENCH_COLLECTION_URL: bank.baseUrl,
      });
    const on = await ours('on', stores[0]!.storeUrl);
    targets.push(on);
    const off = await ours('off', stores[1]!.storeUrl);
    targets.push(off);

    const rate = options.quick ? LATENCY_RATE.quick : LATENCY_RATE.full;
    say(
      `00 to CONFIRMED at ${rate}/s, ${options.durationS} s, on incomingTransfer(confirmed: true) (load average ${loadavg()[0]!.toFixed(1)})…`,
    );
    const latency = await runOnServers('confirmed-latency', options, [on], 'ours', { rate });
    say(`  ${describe(latency)}`);

    const [onRuns, offRuns, paces]: [ScenarioReport[], ScenarioReport[], Pace[]] = [[], [], []];
    for (let round = 1; round <= options.rounds; round += 1) {
      const of = options.rounds > 1 ? ` (round ${round} of ${options.rounds})` : '';
      say(`webhook 00, ${options.durationS} s, confirmation on${of} (load average ${loadavg()[0]!.toFixed(1)})…`);
      const { report, pace } = await withPace(on, () => runOnServers('webhook-00', options, [on], 'ours'));
      onRuns.push({ ...report, target: on.name });
      paces.push(pace);
      const drain = pace.draining === 0 ? 'none left to drain' : `${pace.draining.toFixed(0)}/s draining the rest`;
      say(`  ${describe(report)}; confirmed ${pace.during.toFixed(0)}/s meanwhile, ${drain}`);
      say(`the same, confirmation off${of} (load average ${loadavg()[0]!.toFixed(1)})…`);
      offRuns.push({ ...(await runOnServers('webhook-00', options, [off], 'ours')), target: off.name });
      say(`  ${describe(offRuns.at(-1)!)}`);
    }
    const [withIt, without] = [median(onRuns), median(offRuns)];
    const pace = paces[onRuns.indexOf(onRuns.find((run) => run.perSecond === withIt.perSecond) ?? onRuns[0]!)] ?? paces[0]!;
    for (const target of targets.splice(1).reverse()) await target.stop();
    const slow = await slowBankPace(options, kind, parentDir, services, say);
    return {
      rows: [...confirmationRows(rate, withIt, without, pace, latency), ...slow.rows],
      reports: [latency, withIt, without, ...slow.reports],
    };
  } finally {
    for (const target of targets.reverse()) await target.stop();
    for (const store of stores) await store.drop();
  }
}

/**
 * Confirmations a second against a bank answering each ask in `SLOW_BANK_MS`: posted at a rate
 * above what one replica confirms, timed from the first post to the last confirmation. One replica;
 * on PostgreSQL also two on one store (posted to the first, both confirming).
 */
async function slowBankPace(
  options: BenchOptions,
  kind: StoreKind,
  parentDir: string,
  services: Services | undefined,
  say: (line: string) => void,
): Promise<{ rows: Row[]; reports: ScenarioReport[] }> {
  const rate = options.quick ? SLOW_BANK_RATE.quick : SLOW_BANK_RATE.full;
  const replicaCounts = kind === 'postgres' ? [1, 2] : [1];
  const [rows, reports]: [Row[], ScenarioReport[]] = [[], []];
  for (const count of replicaCounts) {
    const store = await ownStore(kind, parentDir, services?.databaseUrl);
    const targets: Target[] = [];
    try {
      const bank = await startTarget('collection-bank', `bank stand-in answering in ${SLOW_BANK_MS} ms`, {
        BENCH_BANK_DELAY_MS: String(SLOW_BANK_MS),
      });
      targets.push(bank);
      for (let i = 1; i <= count; i += 1) {
        const env = {
          ...appEnv(store.storeUrl, services?.redisUrl ?? 'memory:'),
          COLLECTION_CONFIRMATION: 'on',
          BENCH_COLLECTION_URL: bank.baseUrl,
        };
        targets.push(await startTarget('app', `ours, replica ${i} of ${count}`, env));
      }
      const replicas = targets.slice(1);
      const of = `${count} replica${count > 1 ? 's' : ''}`;
      say(`confirmations against a bank answering in ${SLOW_BANK_MS} ms, ${of}, posted at ${rate}/s for ${options.durationS} s…`);
      const confirmed = () =>
        Promise.all(replicas.map((replica) => metric(replica.baseUrl, CONFIRMED))).then((all) => all.reduce((a, b) => a + b, 0));
      const sampling = sampleWhile(confirmed);
      const report = await runOnServers('confirmed-latency', options, replicas, 'ours', { rate });
      const perSecond = confirmingPace(await sampling.stop());
      say(`  ${perSecond.toFixed(0)} confirmations/s (${describe(report)})`);
      reports.push({ ...report, target: `ours, ${of}, bank in ${SLOW_BANK_MS} ms` });
      const target = count === 1 ? above(SLOW_BANK_TARGET, '/s') : undefined;
      rows.push(
        row(
          `confirmations/s, bank answering in ${SLOW_BANK_MS} ms, ${of}`,
          '-',
          report.failure ? Number.NaN : perSecond,
          Number.NaN,
          whole,
          target,
        ),
      );
    } finally {
      for (const target of targets.reverse()) await target.stop();
      await store.drop();
    }
  }
  return { rows, reports };
}

/** Samples `count` every 100 ms until stopped: the samples, as (ms, count). */
function sampleWhile(count: () => Promise<number>) {
  const samples: [number, number][] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      samples.push([performance.now(), await count()]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    samples.push([performance.now(), await count()]);
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return samples;
    },
  };
}

/**
 * Confirmations a second while the replicas were confirming: from the last sample before the first
 * confirmation to the first sample at the final count (the warm-up before, and the idle end after,
 * left out).
 */
function confirmingPace(samples: readonly [number, number][]): number {
  const [first, last] = [samples[0]?.[1] ?? 0, samples.at(-1)?.[1] ?? 0];
  const start = samples.findLastIndex(([, count]) => count === first);
  const end = samples.findIndex(([, count]) => count === last);
  if (last <= first || end <= start) return Number.NaN;
  return ((last - first) * 1000) / (samples[end]![0] - samples[start]![0]);
}

/**
 * Runs `load` on `target` and measures confirmations meanwhile, then waits until every notification
 * it accepted is CONFIRMED: the pace during the load, and the pace of the drain after it.
 */
async function withPace(target: Target, load: () => Promise<ScenarioReport>): Promise<{ report: ScenarioReport; pace: Pace }> {
  const [before, started] = [await metric(target.baseUrl, CONFIRMED), performance.now()];
  const report = await load();
  const [atEnd, ended] = [await metric(target.baseUrl, CONFIRMED), performance.now()];
  const accepted = await metric(target.baseUrl, ACCEPTED);
  let [confirmed, drained] = [atEnd, ended];
  while (confirmed < accepted) {
    if (performance.now() - ended > DRAIN_TIMEOUT_MS)
      throw new Error(`${accepted - confirmed} notifications still PENDING ${DRAIN_TIMEOUT_MS / 1000} s after the load`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    confirmed = await metric(target.baseUrl, CONFIRMED);
    drained = performance.now();
  }
  const perSecond = (count: number, fromMs: number, toMs: number) =>
    toMs > fromMs && count > 0 ? count / ((toMs - fromMs) / 1000) : Number.NaN;
  // Confirmation may have kept pace with the whole load: then nothing was left to drain (0).
  const draining = confirmed - atEnd === 0 ? 0 : perSecond(confirmed - atEnd, ended, drained);
  return { report, pace: { during: perSecond(atEnd - before, started, ended), draining } };
}

function confirmationRows(rate: number, on: ScenarioReport, off: ScenarioReport, pace: Pace, latency: ScenarioReport): Row[] {
  const value = (r: ScenarioReport, pick: (r: ScenarioReport) => number) => (r.failure ? Number.NaN : pick(r));
  const label = 'webhook 00 with confirmation on';
  return [
    row(
      `${label}: acks/s`,
      'confirmation off',
      value(on, (r) => r.perSecond),
      value(off, (r) => r.perSecond),
      whole,
      atLeast(0.95, 'off'),
    ),
    row(
      `${label}: p99 ms`,
      'confirmation off',
      value(on, (r) => r.latencyMs.p99),
      value(off, (r) => r.latencyMs.p99),
      ms,
      atMost(1.2, 'off'),
    ),
    row('confirmations/s during the webhook load', '-', pace.during, Number.NaN, whole),
    row('confirmations/s draining what it left PENDING', '-', pace.draining, Number.NaN, (v) => (v === 0 ? 'none left' : whole(v))),
    row(
      `00 to arrival on the confirmed stream at ${rate}/s: p50 ms`,
      '-',
      value(latency, (r) => r.latencyMs.p50),
      Number.NaN,
      ms,
    ),
    row(
      `00 to arrival on the confirmed stream at ${rate}/s: p99 ms`,
      '-',
      value(latency, (r) => r.latencyMs.p99),
      Number.NaN,
      ms,
    ),
  ];
}

/**
 * The alert rules and dashboard in ops/ name only what the running service exports at /metrics,
 * with labels those metrics have; every alert says how bad it is and what to check first. promtool
 * (from Debian's prometheus package; .ci/run fetches it) checks the dashboard's PromQL syntax.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createMetrics, type Metrics } from '../src/metrics.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { metricNamesIn, selectorsIn, type Selector } from './helpers/promql.ts';

const RULES_FILE = new URL('../ops/prometheus/alerts.yml', import.meta.url);
const DASHBOARD_FILE = new URL('../ops/grafana/bank-subgraph-dashboard.json', import.meta.url);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules: Rule[] = (parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

interface Panel {
  title?: string;
  type: string;
  datasource?: { type?: string; uid?: string };
  targets?: { expr: string; datasource?: { uid?: string } }[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { uid?: string };
}
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
};
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);

/** Every PromQL expression of the dashboard: panel targets and variable queries (inside label_values). */
function dashboardExpressions(): { where: string; expr: string }[] {
  const targets = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })));
  const variables = dashboard.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => {
      const query = typeof v.query === 'string' ? v.query : v.query.query;
      const inner = /^label_values\((.+),\s*[a-zA-Z_]\w*\)$/.exec(query.trim());
      if (!inner) throw new Error(`variable ${v.name}: only label_values(selector, label) is checked, got ${query}`);
      return { where: `variable ${v.name}`, expr: inner[1]! };
    });
  return [...targets, ...variables];
}

const ruleExpressions = () => rules.map((r) => ({ where: `rule ${r.alert ?? r.record}`, expr: r.expr }));

/** Series Prometheus itself adds to every target, with their labels. */
const SCRAPE_SERIES: Record<string, string[]> = { up: [] };
/** Labels Prometheus attaches to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

/**
 * Every series name the app's /metrics exports (histograms as _bucket/_sum/_count), with its label
 * names. Those come from the metrics' definitions (`metrics`, built as every app builds its own): a
 * labelled series nothing has counted yet is in /metrics by name only.
 */
async function exportedSeries(app: TestApp, metrics: Metrics): Promise<Map<string, string[]>> {
  const response = await request(`${app.baseUrl}/metrics`);
  const text = await response.body.text();
  const series = new Map<string, string[]>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const metric = metrics.registry.getSingleMetric(name!) as unknown as { labelNames?: string[] };
    const labels = [...TARGET_LABELS, ...(metric?.labelNames ?? [])];
    if (type === 'histogram') {
      series.set(`${name}_bucket`, [...labels, 'le']);
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else if (type === 'summary') {
      series.set(name!, [...labels, 'quantile']);
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else {
      series.set(name!, labels);
    }
  }
  return series;
}

/** What is wrong with one selector: a metric nobody exports, or a label it does not have. */
function problemWith(selector: Selector, known: Map<string, string[] | undefined>): string | undefined {
  if (!known.has(selector.metric)) return `${selector.metric} is not exported`;
  const labels = known.get(selector.metric);
  const unknown = labels === undefined ? [] : selector.labels.filter((l) => !labels.includes(l));
  return unknown.length > 0 ? `${selector.metric} has no label ${unknown.join(', ')}` : undefined;
}

/** Every problem in `expressions`, naming where it is. */
function problemsIn(expressions: { where: string; expr: string }[], known: Map<string, string[] | undefined>): string[] {
  return expressions.flatMap(({ where, expr }) =>
    selectorsIn(expr)
      .map((selector) => problemWith(selector, known))
      .filter((problem) => problem !== undefined)
      .map((problem) => `${where}: ${problem}`),
  );
}

/** Exported series, Prometheus's own, and the rules' recorded series (labels not checked). */
async function knownSeries(): Promise<Map<string, string[] | undefined>> {
  const app = await startApp();
  const known = new Map<string, string[] | undefined>(await exportedSeries(app, createMetrics()));
  for (const [name, labels] of Object.entries(SCRAPE_SERIES)) known.set(name, [...TARGET_LABELS, ...labels]);
  for (const rule of rules) if (rule.record) known.set(rule.record, undefined);
  return known;
}

describe('the PromQL reader used by these checks', () => {
  it('finds metric names, not functions, keywords, label names, durations or strings', () => {
    const expr = `histogram_quantile(0.99, sum by (job, le) (rate(a_seconds_bucket{job="x", le=~"0.5|1"}[5m])))
      > 1 and on () hour() >= 8 unless ignoring (instance) group_left b_total offset 10m or vector(0) / c:rec:sum`;
    expect(metricNamesIn(expr)).toEqual(['a_seconds_bucket', 'b_total', 'c:rec:sum']);
    expect(selectorsIn('d{area="account", outcome!~"ok|x"}')).toEqual([{ metric: 'd', labels: ['area', 'outcome'] }]);
  });

  it('reports a metric the service does not export, and a label it does not have', async () => {
    const known = await knownSeries();
    const problems = problemsIn(
      [
        { where: 'rule Typo', expr: 'sum(rate(collection_webhook_reply_total{response_code="03"}[5m])) > 0' },
        { where: 'rule WrongLabel', expr: 'sum(rate(collection_webhook_replies_total{responseCode="03"}[5m])) > 0' },
        { where: 'rule Fine', expr: 'sum(rate(collection_webhook_replies_total{response_code="03"}[5m])) > 0' },
      ],
      known,
    );
    expect(problems).toEqual([
      'rule Typo: collection_webhook_reply_total is not exported',
      'rule WrongLabel: collection_webhook_replies_total has no label responseCode',
    ]);
  });

  it('refuses a function PromQL does not have', () => {
    expect(() => selectorsIn('sum(rat(x_total[5m]))')).toThrow(/unknown PromQL function rat\(\)/);
  });
});

describe('ops/prometheus/alerts.yml', () => {
  it('names only exported metrics, with labels they have', async () => {
    expect(problemsIn(ruleExpressions(), await knownSeries())).toEqual([]);
  });

  it('gives every alert a severity, a summary and a runbook line', () => {
    const alerts = rules.filter((r) => r.alert);
    expect(alerts.length).toBeGreaterThan(10);
    const incomplete = alerts
      .filter((r) => !['critical', 'warning'].includes(r.labels?.severity ?? '') || !r.annotations?.summary || !r.annotations.runbook)
      .map((r) => r.alert);
    expect(incomplete).toEqual([]);
  });

  it('covers what should wake someone', () => {
    const named = new Set(ruleExpressions().flatMap(({ expr }) => metricNamesIn(expr)));
    for (const metric of [
      'collection_webhook_replies_total',
      'collection_store_write_duration_seconds_bucket',
      'bank_circuit_open',
      'bank_upstream_request_duration_seconds_count',
      'bank_list_refreshes_total',
      'bank_subgraph_ready',
      'graphql_subscriptions_ended_early_total',
      'job:graphql_active_subscriptions:sum',
      'collection_store_bytes',
      'collection_quarantine_unreviewed',
      'collection_quarantine_not_kept_total',
    ]) {
      expect(named, metric).toContain(metric);
    }
  });
});

describe('ops/grafana/bank-subgraph-dashboard.json', () => {
  it('names only exported metrics, with labels they have', async () => {
    expect(problemsIn(dashboardExpressions(), await knownSeries())).toEqual([]);
  });

  it('takes its Prometheus from a ${datasource} variable in every panel and query', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const variable = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const queried = panels.filter((p) => p.type !== 'row');
    expect(queried.length).toBeGreaterThan(10);
    const elsewhere = queried
      .filter((p) => p.datasource?.uid !== '${datasource}' || p.targets!.some((t) => t.datasource?.uid !== '${datasource}'))
      .map((p) => p.title);
    expect(elsewhere).toEqual([]);
  });

  it('is valid PromQL for promtool, with the dashboard variables filled in', (context) => {
    const promtool = process.env.PROMTOOL ?? 'promtool';
    const version = spawnSync(promtool, ['--version'], { encoding: 'utf8' });
    if (version.error) {
      // CI must check; elsewhere promtool is optional (.ci/run shows how to get it).
      if (process.env.CI === 'true') throw new Error(`promtool not found (${promtool}): CI=true requires it`);
      return context.skip();
    }
    const values: Record<string, string> = { __rate_interval: '5m', __interval: '1m', __range: '1h', job: 'bank-subgraph', instance: '.*' };
    const fill = (expr: string) =>
      expr.replace(/\$\{?(\w+)\}?/g, (_all, name: string) => {
        if (!(name in values)) throw new Error(`unknown dashboard variable $${name} in: ${expr}`);
        return values[name]!;
      });
    const expressions = dashboardExpressions();
    const group = { name: 'dashboard', rules: expressions.map(({ expr }, i) => ({ record: `dashboard:expr_${i}`, expr: fill(expr) })) };
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-promql-'));
    try {
      const file = join(dir, 'dashboard-rules.json');
      writeFileSync(file, JSON.stringify({ groups: [group] }));
      const check = spawnSync(promtool, ['check', 'rules', file], { encoding: 'utf8' });
      const legend = expressions.map(({ where }, i) => `dashboard:expr_${i} is ${where}`).join('\n');
      expect(check.stdout + check.stderr, legend).toContain('SUCCESS');
      expect(check.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

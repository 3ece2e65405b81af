/**
 * Just enough PromQL reading to check the rules and dashboard in ops/ against what the service
 * exports: the metric names an expression selects, and the label names each selector matches on.
 * Syntax itself is promtool's job; this only has to find names, and to fail on what it cannot place.
 */

/** A metric an expression selects, with the label names its matchers use. */
export interface Selector {
  metric: string;
  labels: string[];
}

// Functions and aggregations (PromQL 2.x) and the Grafana query functions of variables.
const FUNCTIONS = new Set(
  (
    'abs absent absent_over_time avg avg_over_time bottomk ceil changes clamp clamp_max clamp_min count ' +
    'count_over_time count_values day_of_month day_of_week day_of_year days_in_month delta deriv exp floor group ' +
    'histogram_quantile holt_winters hour idelta increase irate label_join label_replace last_over_time ln log10 log2 ' +
    'max max_over_time min min_over_time minute month predict_linear present_over_time quantile quantile_over_time ' +
    'rate resets round scalar sgn sort sort_desc sqrt stddev stddev_over_time stdvar stdvar_over_time sum ' +
    'sum_over_time time timestamp topk vector year acos acosh asin asinh atan atanh cos cosh deg pi rad sin sinh tan tanh'
  ).split(' '),
);
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'atan2',
  'inf',
  'nan',
]);

/**
 * The selectors in `expr`. Grafana variables (`$job`, `${x}`, `[$__rate_interval]`) are allowed.
 * Throws on a call of a function PromQL does not have, so a typo cannot pass as "no metric here".
 */
export function selectorsIn(expr: string): Selector[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // strings: label values, regexes
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const selectors: Selector[] = [];
  // A number or duration (consumed so `5m` yields no `m`), a matcher block, or an identifier.
  const tokens = /(\d[\w.]*)|(\{[^}]*\})|([a-zA-Z_:][\w:]*)/g;
  let previous: Selector | undefined;
  for (const match of text.matchAll(tokens)) {
    const [, , block, identifier] = match;
    if (block !== undefined) {
      const labels = [...block.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1]!);
      if (!previous) throw new Error(`a selector without a metric name cannot be checked: ${expr}`);
      previous.labels.push(...labels);
      previous = undefined;
      continue;
    }
    previous = undefined;
    if (identifier === undefined) continue;
    const called = /^\s*\(/.test(text.slice(match.index + identifier.length));
    if (called) {
      if (!FUNCTIONS.has(identifier)) throw new Error(`unknown PromQL function ${identifier}() in: ${expr}`);
    } else if (!KEYWORDS.has(identifier.toLowerCase())) {
      previous = { metric: identifier, labels: [] };
      selectors.push(previous);
    }
  }
  return selectors;
}

/** The metric names `expr` selects, each once. */
export function metricNamesIn(expr: string): string[] {
  return [...new Set(selectorsIn(expr).map((s) => s.metric))];
}

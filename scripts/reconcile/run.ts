// Sends an export's ids to `reconcileCollections` in batches and gathers the report. A batch is at most
// what the server takes in one call (200 ids), and no more than its operation budget allows: the first
// COST_ESTIMATED_TOO_EXPENSIVE says the budget and what the batch was priced at (with REPUSH, two
// bank calls an id), and the batches shrink to fit it.
import { request } from 'undici';
import type { IdKind } from './ids.ts';

/** The server's own cap on ids per call. */
export const MAX_IDS_PER_CALL = 200;

export type RecoverMode = 'NONE' | 'REPUSH' | 'IMPORT';
export type Verdict = 'MATCHED' | 'MISSING_HERE' | 'MISMATCHED' | 'NOT_AT_BANK' | 'UNKNOWN';

/** One id's line of the report, as `reconcileCollections` answers it. */
export interface ReconcileItem {
  id: string;
  verdict: Verdict | null;
  differences: string[];
  recovered: boolean;
  error: string | null;
}

export const TOTALS = ['checked', 'matched', 'missingHere', 'mismatched', 'notAtBank', 'unknown', 'recovered', 'failed'] as const;
export type Totals = Record<(typeof TOTALS)[number], number>;

/** A refusal of the whole call (a bad token, a wrong URL): nothing of the batch was checked. */
export class ReconcileCallError extends Error {}

const MUTATION = `mutation Reconcile($sessionIds: [String!], $settlementIds: [String!], $recover: RecoverMode) {
  reconcileCollections(sessionIds: $sessionIds, settlementIds: $settlementIds, recover: $recover) {
    checked matched missingHere mismatched notAtBank unknown recovered failed
    items { id verdict differences recovered error }
  }
}`;

interface Options {
  /** The subgraph's /graphql URL. */
  url: URL;
  token: string | undefined;
  kind: IdKind;
  recover: RecoverMode;
  /** Told after each batch: how many ids have been checked so far. */
  onProgress?: (done: number) => void;
}

/** Reconciles every id, batch after batch; the totals add up over the batches. */
export async function reconcileIds(ids: readonly string[], options: Options): Promise<{ totals: Totals; items: ReconcileItem[] }> {
  const totals = Object.fromEntries(TOTALS.map((name) => [name, 0])) as Totals;
  const items: ReconcileItem[] = [];
  let size = MAX_IDS_PER_CALL;
  for (let done = 0; done < ids.length;) {
    const batch = ids.slice(done, done + size);
    const answer = await call(batch, options);
    if ('budget' in answer) {
      const fits = Math.floor((batch.length * answer.budget) / Math.max(answer.estimated, batch.length));
      if (fits < 1 || fits >= batch.length)
        throw new ReconcileCallError(
          `the subgraph refused a batch of ${batch.length} ids as too expensive (MAX_OPERATION_COST is ${answer.budget})`,
        );
      size = fits;
      continue;
    }
    for (const name of TOTALS) totals[name] += answer.report[name];
    items.push(...answer.report.items);
    done += batch.length;
    options.onProgress?.(done);
  }
  return { totals, items };
}

type Report = Totals & { items: ReconcileItem[] };

async function call(
  batch: readonly string[],
  { url, token, kind, recover }: Options,
): Promise<{ report: Report } | { budget: number; estimated: number }> {
  let response;
  try {
    response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify({ query: MUTATION, variables: { [kind]: batch, recover } }),
      // The bank is asked about every id of the batch: give it the time the subgraph gives its calls, several times over.
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
    });
  } catch (error) {
    throw new ReconcileCallError(`could not reach ${url.href}: ${(error as Error).message}`);
  }
  const text = await response.body.text();
  let body: {
    data?: { reconcileCollections?: Report | null } | null;
    errors?: { message: string; extensions?: { code?: string; cost?: { estimated?: number; max?: number } } }[];
  };
  try {
    body = JSON.parse(text);
  } catch {
    throw new ReconcileCallError(
      `${url.href} answered HTTP ${response.statusCode} with no GraphQL response (is it the subgraph's /graphql?)`,
    );
  }
  const error = body.errors?.[0];
  const cost = error?.extensions?.code === 'COST_ESTIMATED_TOO_EXPENSIVE' ? error.extensions.cost : undefined;
  if (typeof cost?.max === 'number')
    return { budget: cost.max, estimated: typeof cost.estimated === 'number' ? cost.estimated : batch.length };
  const report = body.data?.reconcileCollections;
  if (!report)
    throw new ReconcileCallError(
      `the subgraph refused the call: ${error ? `${error.extensions?.code ?? 'error'}: ${error.message}` : `HTTP ${response.statusCode}`}`,
    );
  return { report };
}

// Sends an export's ids to `reconcileCollections` in batches, one kind of id a call, and gathers the
// report. A batch is at most what the server takes in one call (200 ids), and no more than its
// operation budget allows: the first COST_ESTIMATED_TOO_EXPENSIVE says the budget and what the batch
// was priced at, and the batches shrink to fit it. A call that fails ends the run with what was done.
import { request } from 'undici';
import type { ExportId, IdKind } from './ids.ts';

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
class ReconcileCallError extends Error {}

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
  recover: RecoverMode;
  /** Told after each batch: how many ids have been checked so far. */
  onProgress?: (done: number) => void;
}

/** The report of the ids checked, in the export's order; `failure` says why the run stopped short of the rest. */
export interface Reconciled {
  totals: Totals;
  items: ReconcileItem[];
  failure: string | undefined;
}

/** Reconciles every id, batch after batch, settlement ids and session ids each in calls of their own. */
export async function reconcileIds(ids: readonly ExportId[], options: Options): Promise<Reconciled> {
  const totals = Object.fromEntries(TOTALS.map((name) => [name, 0])) as Totals;
  const items = new Map<ExportId, ReconcileItem>();
  const kinds = [...new Set(ids.map(({ kind }) => kind))];
  let size = MAX_IDS_PER_CALL;
  let failure: string | undefined;
  try {
    for (const kind of kinds) {
      const ofKind = ids.filter((one) => one.kind === kind);
      for (let done = 0; done < ofKind.length;) {
        const batch = ofKind.slice(done, done + size);
        const answer = await call(
          kind,
          batch.map(({ id }) => id),
          options,
        );
        if ('budget' in answer) {
          size = smallerBatch(batch.length, answer);
          continue;
        }
        for (const name of TOTALS) totals[name] += answer.report[name];
        const byId = new Map(answer.report.items.map((item) => [item.id, item]));
        for (const one of batch) {
          const item = byId.get(one.id);
          if (item) items.set(one, item);
        }
        done += batch.length;
        options.onProgress?.(items.size);
      }
    }
  } catch (error) {
    if (!(error instanceof ReconcileCallError)) throw error;
    failure = error.message;
  }
  // In the export's order, whatever order the kinds were sent in.
  return { totals, items: ids.flatMap((one) => items.get(one) ?? []), failure };
}

/** The batch size the operation budget allows, from the server's refusal of a batch of `length`. */
function smallerBatch(length: number, { budget, estimated }: { budget: number; estimated: number }): number {
  const fits = Math.floor((length * budget) / Math.max(estimated, length));
  if (fits < 1 || fits >= length)
    throw new ReconcileCallError(`the subgraph refused a batch of ${length} ids as too expensive (MAX_OPERATION_COST is ${budget})`);
  return fits;
}

type Report = Totals & { items: ReconcileItem[] };

async function call(
  kind: IdKind,
  batch: readonly string[],
  { url, token, recover }: Options,
): Promise<{ report: Report } | { budget: number; estimated: number }> {
  let response;
  try {
    response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify({ query: MUTATION, variables: { [kind]: batch, recover } }),
      // No time-out of our own: the subgraph bounds each id (the bank's time-outs and breaker, a
      // REPUSH's 10 s wait), so a batch takes what it takes; Ctrl-C stops the run.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  } catch (error) {
    throw new ReconcileCallError(`could not reach ${url.href}: ${(error as Error).message}`);
  }
  let text: string;
  try {
    text = await response.body.text();
  } catch (error) {
    throw new ReconcileCallError(`${url.href} stopped answering: ${(error as Error).message}`);
  }
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

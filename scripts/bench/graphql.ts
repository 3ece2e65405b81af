// The GraphQL side of the bench: the queries the scenarios send, how a reply is judged, and the
// figures read from /metrics.
import { randomInt } from 'node:crypto';
import { request } from 'undici';

export const GRAPHQL_PATH = '/graphql';
export const BANKS_QUERY = '{ banks { code name } }';
export const ACCOUNT_QUERY = '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName bank { name } } }';

/**
 * An account for one fan-out run, which nothing else delivers to: a live-only subscription that
 * starts while a replica still settles an earlier burst may also get that burst's tail
 * (docs/schema.md), and the runs on one replica and on two share a database.
 */
export const fanoutAccount = (): string => `09${String(randomInt(100_000_000)).padStart(8, '0')}`;
export const incomingTransferSubscription = (account: string): string =>
  `subscription { incomingTransfer(accountNumber: "${account}") { settlementId transactionAmount } }`;

type Data = Record<string, any>;

/** The value at a dotted path of `data`, e.g. "collectionSummary.count" or "banks.length". */
export const pick = (data: Data, path: string): unknown => path.split('.').reduce<any>((value, key) => value?.[key], data);

/**
 * Names a GraphQL reply: `ok` when it has no errors and `hasData` accepts its data, otherwise the
 * HTTP status, the first error's code, or "unexpected data".
 */
export function graphqlOutcome(status: number, body: string, hasData: (data: Data) => boolean): string {
  if (status !== 200) return `http ${status}`;
  let reply: { data?: Data | null; errors?: { extensions?: { code?: string } }[] };
  try {
    reply = JSON.parse(body);
  } catch {
    return 'unreadable reply';
  }
  if (reply.errors?.length) return `graphql ${reply.errors[0]?.extensions?.code ?? 'error'}`;
  return reply.data && hasData(reply.data) ? 'ok' : 'unexpected data';
}

/** Sends one query; resolves to its data, or throws with the outcome when it is not `ok`. */
export async function query(baseUrl: string, text: string, variables: Data = {}): Promise<Data> {
  const response = await request(`${baseUrl}${GRAPHQL_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: text, variables }),
  });
  const body = await response.body.text();
  const outcome = graphqlOutcome(response.statusCode, body, () => true);
  if (outcome !== 'ok') throw new Error(`${text} → ${outcome}`);
  return JSON.parse(body).data;
}

/** One series of a server's /metrics (name and labels exactly as exported); 0 when absent. */
export async function metric(baseUrl: string, series: string): Promise<number> {
  const text = await (await request(`${baseUrl}/metrics`)).body.text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

// The GraphQL side of the load process: the queries the scenarios send and how a reply is judged.
import { randomInt } from 'node:crypto';
import { request } from 'undici';

export const GRAPHQL_PATH = '/graphql';

export const BANKS_QUERY = '{ banks { code name } }';
export const ACCOUNT_QUERY = '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName bank { name } } }';
export const NOTIFICATIONS_QUERY =
  '{ collectionNotifications(first: 20) { edges { cursor node { settlementId transactionAmount } } } }';
/**
 * An account for one fan-out run: no other scenario, nor any other run, delivers to it, so a live
 * subscription on it sees only that run's events. One that starts while a replica's feed is still
 * settling an earlier burst would otherwise also get that burst's tail, as live-only subscriptions
 * may (docs/schema.md): the fan-out on one replica and then on two share a database.
 */
export const fanoutAccount = (): string => `09${String(randomInt(100_000_000)).padStart(8, '0')}`;
export const incomingTransferSubscription = (account: string): string =>
  `subscription { incomingTransfer(accountNumber: "${account}") { settlementId transactionAmount } }`;

type Data = Record<string, any>;

/**
 * Names a GraphQL reply: `ok` when it has no errors and `hasData` accepts its data, otherwise the
 * HTTP status, the first error's code, or "unexpected data". A 200 with errors is still a failure.
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

/** Sends one query over HTTP; resolves to its data, or throws with the outcome when it is not `ok`. */
export async function query(baseUrl: string, text: string): Promise<Data> {
  const response = await request(`${baseUrl}${GRAPHQL_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: text }),
  });
  const body = await response.body.text();
  const outcome = graphqlOutcome(response.statusCode, body, () => true);
  if (outcome !== 'ok') throw new Error(`${text} → ${outcome}`);
  return JSON.parse(body).data;
}

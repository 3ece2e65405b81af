// The bank's collection service, as the confirmation scenario's stand-in, in a process of its own (a
// bank is not on ours' event loop): it checks Client-Id and X-Auth-Signature as the bank does, and
// answers op 16 for every notification the bench's bodies carry (bank.ts, heldTransfer), amounts as
// JSON numbers as the bank writes them; any other id with the bank's "not found". With
// BENCH_BANK_DELAY_MS, each answer waits that long, as a bank answering slowly does.
import { createServer } from 'node:http';
import { heldTransfer, signedHeaders } from './bank.ts';
import { hostHttpServer } from './host.ts';

const expected = signedHeaders();
const delayMs = Number(process.env.BENCH_BANK_DELAY_MS ?? 0);
const AMOUNTS = new Set(['transactionAmount', 'settledAmount', 'feeAmount', 'vatAmount']);
const NOT_FOUND = JSON.stringify({
  sessionId: '',
  settlementId: '',
  accountNumber: '',
  tranRemarks: 'Transaction not found!!!',
  notification_acknowledgement: 0,
});

/** Op 16's answer: the fields as held, each amount written as the number's own text (never through a float). */
function verifyAnswer(held: Record<string, string>): string {
  const fields = {
    ...held,
    sourceBankCode: '000013',
    settlementDateTime: '11/22/2026 2:05:41 PM',
    stamp_duty_flg: 0,
    post_flg: 1,
    notification_acknowledgement: 1,
  };
  return `{${Object.entries(fields)
    .map(([name, value]) => `${JSON.stringify(name)}:${AMOUNTS.has(name) ? String(value) : JSON.stringify(value)}`)
    .join(',')}}`;
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://bank');
  if (request.headers['client-id'] !== expected['client-id'] || request.headers['x-auth-signature'] !== expected['x-auth-signature']) {
    response.writeHead(401, { 'content-type': 'application/json' }).end('{"requestSuccessful":false,"responseMessage":"Unauthorized"}');
    return;
  }
  if (url.pathname !== '/PiPverifyTransaction_settlementid') {
    response.writeHead(404).end();
    return;
  }
  const held = heldTransfer(url.searchParams.get('settlement_id') ?? '');
  const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end(held ? verifyAnswer(held) : NOT_FOUND);
  if (delayMs > 0) setTimeout(answer, delayMs);
  else answer();
});
await hostHttpServer(server);

// What the webhook refuses, or takes for a conflict, is kept in the store's quarantine before its
// reply is sent, or answered 03: on both stores, through the real server, the rows read straight
// from the database as soon as the reply has arrived.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrapeSum } from './helpers/metrics.ts';
import { postgresSession, urlStoreBackends } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

const KEPT = 'collection notification kept in the quarantine';
const NOT_KEPT = /^collection notification not kept in the quarantine/;

/** The next HTTP response on `socket`: its body, once its declared length has arrived. */
function nextResponse(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const head = received.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(received.subarray(0, head).toString())?.[1]);
      if (head === -1 || received.length < head + 4 + length) return;
      socket.off('data', onData);
      resolve(received.subarray(head + 4, head + 4 + length).toString('utf8'));
    };
    socket.on('data', onData);
  });
}

/**
 * Delivers `bodies` signed, each on a keep-alive connection of its own that the server has already
 * served once, all written in one go: the server reads them in one turn, so the quarantine is handed
 * them in one batch. Resolves to each reply's responseCode.
 */
async function deliverInOneTurn(baseUrl: string, bodies: string[]): Promise<string[]> {
  const { port } = new URL(baseUrl);
  const sockets = await Promise.all(
    bodies.map(async () => {
      const socket = connect(Number(port), '127.0.0.1');
      onCleanup(() => socket.destroy());
      await once(socket, 'connect');
      // Served once: the server has accepted it, so it reads what comes next as soon as it arrives.
      const served = nextResponse(socket);
      socket.write('GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      await served;
      return socket;
    }),
  );
  const headers = Object.entries(signedHeaders())
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const replies = sockets.map(nextResponse);
  sockets.forEach((socket, i) =>
    socket.write(
      `POST /webhooks/collection HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}content-length: ${Buffer.byteLength(bodies[i]!)}\r\n\r\n${bodies[i]}`,
    ),
  );
  return (await Promise.all(replies)).map((reply) => (JSON.parse(reply) as { responseCode: string }).responseCode);
}

describe.each(urlStoreBackends.filter((backend) => backend.enabled))('the webhook quarantine on $name', (backend) => {
  async function start(env: Record<string, string> = {}) {
    const database = await backend.create();
    const { logger, logged } = captureLogs();
    const app = await startApp({ STORE_URL: database.storeUrl, ...env }, { logger });
    const send = async (body: string, headers?: Record<string, string>) => (await app.deliver(body, headers)).reply.responseCode as string;
    /** Resolves once the delivery of this sessionId was kept (or given up: the log line). */
    const kept = (sessionId: string) => logged((line) => line.msg === KEPT && line.sessionId === sessionId);
    const notKept = (sessionId: string) => logged((line) => NOT_KEPT.test(String(line.msg)) && line.sessionId === sessionId);
    return { ...app, database, send, kept, notKept, logged };
  }

  it('keeps each signed delivery refused for its content with its body byte for byte, its reason, reply code, arrival and ids', async () => {
    const { database, send } = await start();
    const before = new Date().toISOString();
    // Odd whitespace, a byte-order mark, escapes: kept as sent, not as parsed.
    const nineDigits = `\uFEFF {\r\n\t"sessionId" : "S-nine",  "accountNumber":"012345678" ,\n"settlementId": "STL-9", "transactionAmount":"1500.00", "x":"\\u00e9"  }\n\n`;
    const notJson = '{"sessionId": "S-broken", "accountNumber": "0123456789", ';
    const tooLong = JSON.stringify(notificationBody({ sessionId: 'S-long', settlementId: '9'.repeat(65) }));
    expect([await send(nineDigits), await send(notJson), await send(tooLong)]).toEqual(['02', '02', '02']);
    // Committed before each reply was sent: there the moment the last reply arrived.
    const rows = await database.quarantined();
    expect(rows.map((row) => row.raw_body.toString('utf8'))).toEqual([nineDigits, notJson, tooLong]);
    expect(rows.map(({ raw_body: _body, received_at: _at, ...row }) => row)).toEqual([
      {
        kind: 'REJECTED',
        reason: 'invalid_account_number',
        detail: null,
        response_code: '02',
        session_id: 'S-nine',
        settlement_id: 'STL-9',
        account_number: '012345678',
        reviewed_at: null,
      },
      // Not JSON: none of its ids could be read.
      {
        kind: 'REJECTED',
        reason: 'body_not_json_object',
        detail: null,
        response_code: '02',
        session_id: null,
        settlement_id: null,
        account_number: null,
        reviewed_at: null,
      },
      {
        kind: 'REJECTED',
        reason: 'settlement_id_too_long',
        detail: null,
        response_code: '02',
        session_id: 'S-long',
        // Cut to what an index of either store holds; the body keeps it whole.
        settlement_id: '9'.repeat(64),
        account_number: '0123456789',
        reviewed_at: null,
      },
    ]);
    for (const row of rows) expect(row.received_at >= before && row.received_at <= new Date().toISOString()).toBe(true);
    expect(await database.countRows()).toBe(0);
  });

  it('keeps what it read of a signed body over WEBHOOK_MAX_BODY_BYTES, refused with 413, saying how much', async () => {
    const { database, deliver, baseUrl } = await start();
    const body = JSON.stringify(notificationBody({ sessionId: 'S-huge', tranRemarks: 'x'.repeat(100 * 1024) }));
    // Declared too long: refused before a byte is read.
    expect((await deliver(body)).status).toBe(413);
    // Sent in chunks, no length declared: refused once the limit is passed, the rest unread.
    const chunked = await request(`${baseUrl}/webhooks/collection`, {
      method: 'POST',
      headers: signedHeaders(),
      body: Readable.from([body.slice(0, 60_000), body.slice(60_000)]),
    });
    expect(((await chunked.body.json()) as { responseCode: string }).responseCode).toBe('02');
    expect(chunked.statusCode).toBe(413);
    const [declared, read] = await database.quarantined();
    expect(declared).toMatchObject({
      kind: 'REJECTED',
      reason: 'body_too_large',
      response_code: '02',
      detail: 'its declared length passed the size limit: none of it was read',
    });
    expect(declared!.raw_body.byteLength).toBe(0);
    expect(read).toMatchObject({ reason: 'body_too_large', detail: 'it passed the size limit: its first 65536 bytes are kept' });
    expect(read!.raw_body.toString('utf8')).toBe(body.slice(0, 64 * 1024));
  });

  it('keeps nothing of a delivery refused for its signature or its source', async () => {
    const { database, send, kept } = await start();
    const invalid = JSON.stringify(notificationBody({ sessionId: 'S-unsigned', accountNumber: '012345678' }));
    expect(await send(invalid, signedHeaders(sandboxCredentials.webhookClientId, 'not-the-secret'))).toBe('02');
    expect(await send(invalid, { 'content-type': 'application/json' })).toBe('02');
    // Kept in the order handed over: once this one is in, the two before would be too.
    expect(await send(JSON.stringify(notificationBody({ sessionId: 'S-signed', accountNumber: '012345678' })))).toBe('02');
    await kept('S-signed');
    expect((await database.quarantined()).map((row) => row.session_id)).toEqual(['S-signed']);

    const elsewhere = await start({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' });
    expect(await elsewhere.send(JSON.stringify(notificationBody({ sessionId: 'S-elsewhere', accountNumber: '012345678' })))).toBe('02');
    // Closing drains the quarantine: whatever it was handed is written by then.
    await elsewhere.app.close();
    expect(await elsewhere.database.quarantined()).toEqual([]);
  });

  it('keeps a duplicate with other money fields as a CONFLICT answered 01, the first staying the money record; an exact one is not kept', async () => {
    const { database, send, query, logged, baseUrl } = await start();
    const first = notificationBody({ transactionAmount: '1500.00' });
    expect(await send(JSON.stringify(first))).toBe('00');
    // The bank's retry: another session, its amount written otherwise, the same money.
    expect(await send(JSON.stringify({ ...first, sessionId: 'S-retry', transactionAmount: '1500.0', currency: 'ngn' }))).toBe('01');
    const forged = JSON.stringify({ ...first, sessionId: 'S-forged', transactionAmount: '950000.00' }, null, 1);
    expect(await send(forged)).toBe('01');
    const rows = await database.quarantined();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: 'CONFLICT',
      reason: 'conflicting_duplicate',
      detail: 'transactionAmount 950000.00 (stored 1500.00)',
      response_code: '01',
      session_id: 'S-forged',
      settlement_id: first.settlementId,
      account_number: '0123456789',
    });
    expect(rows[0]!.raw_body.toString('utf8')).toBe(forged);
    expect(await logged((line) => line.level === 40 && line.sessionId === 'S-forged')).toMatchObject({ fields: ['transactionAmount'] });
    const { data } = await query('query($id: ID!) { collectionNotification(settlementId: $id) { transactionAmount sessionId } }', {
      id: first.settlementId,
    });
    expect(data!.collectionNotification).toEqual({ transactionAmount: '1500.00', sessionId: first.sessionId });
    expect(
      await scrapeSum({ baseUrl }, 'collection_webhook_quarantined_total', { kind: 'CONFLICT', reason: 'conflicting_duplicate' }),
    ).toBe(1);
  });

  it('keeps as a CONFLICT a redelivery naming another payer, answered 01, never a silent 01', async () => {
    const { database, send } = await start();
    const first = notificationBody({ sourceAccountNumber: '0987654321' });
    expect(await send(JSON.stringify(first))).toBe('00');
    expect(await send(JSON.stringify({ ...first, sessionId: 'S-other-payer', sourceAccountNumber: '1122334455' }))).toBe('01');
    expect(await database.quarantined()).toEqual([
      expect.objectContaining({
        kind: 'CONFLICT',
        session_id: 'S-other-payer',
        detail: 'sourceAccountNumber 1122334455 (stored 0987654321)',
      }),
    ]);
  });

  it('refuses with 02 and keeps a body holding a key twice, or an id holding an invisible character, naming why', async () => {
    const { database, send, query } = await start();
    const body = notificationBody({ sessionId: 'S-twice', transactionAmount: '1.00' });
    const twice = JSON.stringify(body).replace('"transactionAmount":"1.00"', '"transactionAmount":"1.00","transactionAmount":"950000.00"');
    const zeroWidth = notificationBody({ sessionId: 'S-zero-width', settlementId: `${notificationBody().settlementId}\u200b` });
    const nul = notificationBody({ sessionId: 'S-\u0000' });
    expect([await send(twice), await send(JSON.stringify(zeroWidth)), await send(JSON.stringify(nul))]).toEqual(['02', '02', '02']);
    expect(
      (await database.quarantined()).map(({ kind, reason, detail, response_code }) => ({ kind, reason, detail, response_code })),
    ).toEqual([
      { kind: 'REJECTED', reason: 'duplicate_key', detail: 'the key "transactionAmount" is given twice', response_code: '02' },
      { kind: 'REJECTED', reason: 'invisible_character_in_id', detail: 'settlementId holds U+200B', response_code: '02' },
      { kind: 'REJECTED', reason: 'invisible_character_in_id', detail: 'sessionId holds U+0000', response_code: '02' },
    ]);
    expect((await database.quarantined())[0]!.raw_body.toString('utf8')).toBe(twice);
    // Neither became a notification: the settlementId without its zero-width space is free.
    expect(await database.countRows()).toBe(0);
    const { data } = await query('query($id: ID!) { collectionNotification(settlementId: $id) { settlementId } }', {
      id: body.settlementId,
    });
    expect(data!.collectionNotification).toBeNull();
  });

  it('refuses with 02 and keeps a body nested deeper than 32 levels, the same on every delivery, and takes one of 32', async () => {
    const { database, send, deliver, query } = await start();
    /** A valid notification whose extra field nests `levels` arrays: the body itself is one level more. */
    const nested = (sessionId: string, levels: number) =>
      JSON.stringify(notificationBody({ sessionId, extra: null })).replace(
        '"extra":null',
        `"extra":${'['.repeat(levels)}${']'.repeat(levels)}`,
      );
    const deepest = nested('S-deepest', 10_000);
    // Past any recursive walk's stack, and past the JIT's moods: the same reply every time.
    expect([await send(deepest), await send(deepest), await send(deepest)]).toEqual(['02', '02', '02']);
    expect((await deliver(deepest)).reply.sessionId).toBe('S-deepest');
    expect(await send(nested('S-33', 32))).toBe('02');
    const fits = notificationBody({ sessionId: 'S-32' });
    expect(await send(JSON.stringify({ ...fits, extra: JSON.parse(`${'['.repeat(31)}${']'.repeat(31)}`) }))).toBe('00');
    const rows = await database.quarantined();
    expect(rows.map(({ kind, reason, detail, session_id }) => ({ kind, reason, detail, session_id }))).toEqual([
      ...Array(4).fill({ kind: 'REJECTED', reason: 'body_too_deep', detail: 'it nests more than 32 levels deep', session_id: 'S-deepest' }),
      { kind: 'REJECTED', reason: 'body_too_deep', detail: 'it nests more than 32 levels deep', session_id: 'S-33' },
    ]);
    expect(rows[0]!.raw_body.toString('utf8')).toBe(deepest);
    expect(await database.countRows()).toBe(1);
    const { data } = await query('query($id: ID!) { collectionNotification(settlementId: $id) { sessionId } }', { id: fits.settlementId });
    expect(data!.collectionNotification).toEqual({ sessionId: 'S-32' });
  });

  it('refuses with 02 and keeps ids that are not printable ASCII: three that print alike are three refusals, not three money records', async () => {
    const { database, send } = await start();
    const base = `${notificationBody().settlementId}-`;
    const lookalikes = [`${base}\u00c9`, `${base}E\u0301`, `${base}\u0405`];
    const replies = [];
    for (const [i, settlementId] of lookalikes.entries())
      replies.push(await send(JSON.stringify(notificationBody({ sessionId: `S-alike-${i}`, settlementId }))));
    expect(await send(JSON.stringify(notificationBody({ sessionId: 'S 1' })))).toBe('02');
    expect(replies).toEqual(['02', '02', '02']);
    expect((await database.quarantined()).map(({ reason, detail }) => ({ reason, detail }))).toEqual([
      { reason: 'id_not_printable_ascii', detail: 'settlementId holds U+00C9' },
      { reason: 'id_not_printable_ascii', detail: 'settlementId holds U+0301' },
      { reason: 'id_not_printable_ascii', detail: 'settlementId holds U+0405' },
      { reason: 'id_not_printable_ascii', detail: 'sessionId holds U+0020' },
    ]);
    expect(await database.countRows()).toBe(0);
  });

  it('answers a sessionId longer than 64 characters 02 and keeps it, its ids cut to 64, the conflicting duplicate of a stored transfer too', async () => {
    const { database, send, deliver } = await start();
    const first = notificationBody();
    expect(await send(JSON.stringify(first))).toBe('00');
    const long = 'S'.repeat(3_500);
    // Another amount under a stored settlementId: a conflict, but its sessionId no index of either store could hold.
    const conflict = JSON.stringify({ ...first, sessionId: long, transactionAmount: '950000.00' });
    expect((await deliver(conflict)).reply).toMatchObject({ responseCode: '02', sessionId: long });
    expect(await send(JSON.stringify(notificationBody({ sessionId: long, settlementId: '7'.repeat(500) })))).toBe('02');
    expect(await send(JSON.stringify(notificationBody({ sessionId: 'S'.repeat(64) })))).toBe('00');
    const rows = await database.quarantined();
    expect(rows.map(({ reason, session_id, settlement_id }) => ({ reason, session_id, settlement_id }))).toEqual([
      { reason: 'session_id_too_long', session_id: 'S'.repeat(64), settlement_id: first.settlementId },
      { reason: 'settlement_id_too_long', session_id: 'S'.repeat(64), settlement_id: '7'.repeat(64) },
    ]);
    expect(rows[0]!.raw_body.toString('utf8')).toBe(conflict);
    expect(await database.countRows()).toBe(2);
  });

  it('reads an id sent as a JSON number from its text: stored, echoed and read back digit for digit', async () => {
    const { send, deliver, query } = await start();
    const body = notificationBody();
    const settlementId = '12345678901234567890123';
    const text = JSON.stringify(body)
      .replace(`"settlementId":"${body.settlementId}"`, `"settlementId":${settlementId}`)
      .replace(`"sessionId":"${body.sessionId}"`, '"sessionId":90110221122000001234');
    expect((await deliver(text)).reply).toMatchObject({ responseCode: '00', sessionId: '90110221122000001234' });
    expect(await send(text)).toBe('01');
    const { data } = await query('query($id: ID!) { collectionNotification(settlementId: $id) { settlementId sessionId } }', {
      id: settlementId,
    });
    expect(data!.collectionNotification).toEqual({ settlementId, sessionId: '90110221122000001234' });
  });

  it('answers each refusal for itself: one delivery the quarantine refuses is 03, the honest ones written with it 02', async () => {
    const { database, baseUrl } = await start();
    await database.refuseQuarantineRow('SPOISON');
    const refused = (sessionId: string) => JSON.stringify(notificationBody({ sessionId, accountNumber: '012345678' }));
    const honest = Array.from({ length: 40 }, (_, i) => `S-honest-${i}`);
    const replies = await deliverInOneTurn(baseUrl, [...honest.slice(0, 20), 'SPOISON', ...honest.slice(20)].map(refused));
    expect(replies.filter((code) => code === '03')).toEqual(['03']);
    expect(replies[20]).toBe('03');
    expect(new Set((await database.quarantined()).map((row) => row.session_id))).toEqual(new Set(honest));
  });

  it('keeps a conflict with a notification another replica stored', async () => {
    const { database, send } = await start();
    const { logger, logged } = captureLogs();
    const second = await startApp({ STORE_URL: database.storeUrl }, { logger });
    const first = notificationBody();
    expect(await send(JSON.stringify(first))).toBe('00');
    // The second replica finds it stored: it knows the settlementId, not the money, until it reads it.
    expect((await second.deliver({ ...first, sessionId: 'S-other-account', accountNumber: '1234567890' })).reply.responseCode).toBe('01');
    expect(await logged((line) => line.msg === KEPT && line.sessionId === 'S-other-account')).toMatchObject({ quarantine: 'CONFLICT' });
    expect(await database.quarantined()).toEqual([
      expect.objectContaining({ kind: 'CONFLICT', detail: 'accountNumber 1234567890 (stored 0123456789)' }),
    ]);
  });

  it('refuses with 02 and keeps as UNSTORABLE a delivery the store refuses on its own; a store that cannot write keeps nothing (03)', async () => {
    const { database, send } = await start();
    const poison = notificationBody({ sessionId: 'S-poison', settlementId: `9${Date.now()}` });
    await database.refuseRow(poison.settlementId);
    expect(await send(JSON.stringify(poison))).toBe('02');
    expect(await database.quarantined()).toEqual([
      expect.objectContaining({
        kind: 'UNSTORABLE',
        reason: 'store_refused_row',
        response_code: '02',
        session_id: 'S-poison',
        detail: expect.stringContaining('refused'),
      }),
    ]);

    await database.breakInserts();
    expect(await send(JSON.stringify(notificationBody({ sessionId: 'S-down' })))).toBe('03');
    // Kept in the order handed over: the 03 before it would be in by now.
    expect(await send(JSON.stringify(notificationBody({ sessionId: 'S-marker', accountNumber: '1' })))).toBe('02');
    expect((await database.quarantined()).map((row) => row.session_id)).toEqual(['S-poison', 'S-marker']);
  });

  it('answers 03 (the bank sends it again) to what the quarantine cannot write, counting and logging it, and 02 once it can', async () => {
    const { database, send, notKept, baseUrl } = await start();
    await database.freezeQuarantine();
    const refused = JSON.stringify(notificationBody({ sessionId: 'S-frozen', accountNumber: '012345678' }));
    expect(await send(refused)).toBe('03');
    expect(await notKept('S-frozen')).toMatchObject({ cause: 'write_failed', level: 50 });
    expect(await scrapeSum({ baseUrl }, 'collection_quarantine_not_kept_total', { kind: 'REJECTED', cause: 'write_failed' })).toBe(1);
    expect(await scrapeSum({ baseUrl }, 'collection_webhook_replies_total', { response_code: '03', reason: 'quarantine_not_kept' })).toBe(
      1,
    );
    // A conflict cannot be kept either: 03, never a silent 01.
    const first = notificationBody();
    expect(await send(JSON.stringify(first))).toBe('00');
    expect(await send(JSON.stringify({ ...first, sessionId: 'S-conflict', transactionAmount: '9.00' }))).toBe('03');
    expect(await notKept('S-conflict')).toMatchObject({ quarantine: 'CONFLICT', cause: 'write_failed' });
    // The money path is untouched, and an honest retry still stores nothing and gets 01.
    expect(await send(JSON.stringify(notificationBody()))).toBe('00');
    expect(await send(JSON.stringify({ ...first, sessionId: 'S-retry' }))).toBe('01');
    expect(await database.quarantined()).toEqual([]);
    // The bank's retry, once the quarantine can be written again.
    await database.thawQuarantine();
    expect(await send(refused)).toBe('02');
    expect((await database.quarantined()).map((row) => row.session_id)).toEqual(['S-frozen']);
  });

  it('keeps at most QUARANTINE_MAX_ROWS awaiting review, answering 03 past it, until a review makes room', async () => {
    const { database, send, notKept, baseUrl, query } = await start({ QUARANTINE_MAX_ROWS: '2' });
    const refused = (sessionId: string) => JSON.stringify(notificationBody({ sessionId, accountNumber: '012345678' }));
    expect([await send(refused('S-1')), await send(refused('S-2')), await send(refused('S-3'))]).toEqual(['02', '02', '03']);
    expect(await notKept('S-3')).toMatchObject({ cause: 'over_limit', level: 40, msg: expect.stringContaining('QUARANTINE_MAX_ROWS') });
    expect((await database.quarantined()).map((row) => row.session_id)).toEqual(['S-1', 'S-2']);
    expect(
      await scrapeSum({ baseUrl }, 'collection_webhook_quarantined_total', { kind: 'REJECTED', reason: 'invalid_account_number' }),
    ).toBe(2);
    expect(await scrapeSum({ baseUrl }, 'collection_quarantine_not_kept_total', { kind: 'REJECTED', cause: 'over_limit' })).toBe(1);
    const { data } = await query('mutation { reviewQuarantinedDelivery(id: "1", note: "credited by hand") { id } }');
    expect(data).toEqual({ reviewQuarantinedDelivery: { id: '1' } });
    expect(await send(refused('S-3'))).toBe('02');
  });

  it('keeps at most QUARANTINE_MAX_BYTES of bodies awaiting review, answering 03 to a body that would pass it', async () => {
    const { database, send, notKept, baseUrl } = await start({ QUARANTINE_MAX_BYTES: '3000' });
    const refused = (sessionId: string, size: number) => {
      const body = JSON.stringify(notificationBody({ sessionId, accountNumber: '012345678', tranRemarks: '' }));
      return body.replace('"tranRemarks":""', `"tranRemarks":"${'x'.repeat(size - Buffer.byteLength(body))}"`);
    };
    expect([await send(refused('S-big', 2000)), await send(refused('S-too-big', 1001)), await send(refused('S-fits', 1000))]).toEqual([
      '02',
      '03',
      '02',
    ]);
    expect(await notKept('S-too-big')).toMatchObject({
      cause: 'over_bytes',
      level: 40,
      msg: expect.stringContaining('QUARANTINE_MAX_BYTES'),
    });
    expect((await database.quarantined()).map((row) => [row.session_id, row.raw_body.byteLength])).toEqual([
      ['S-big', 2000],
      ['S-fits', 1000],
    ]);
    expect(await scrapeSum({ baseUrl }, 'collection_quarantine_not_kept_total', { kind: 'REJECTED', cause: 'over_bytes' })).toBe(1);
  });

  it.runIf(backend.name === 'PostgreSQL')('sends a refusal no reply until its quarantine row is committed, while 00s go on', async () => {
    const { database, send } = await start();
    // Another session holds a lock every insert into the quarantine waits for.
    const session = await postgresSession(database.storeUrl);
    await session.query('BEGIN');
    await session.query('LOCK TABLE collection_quarantine IN SHARE MODE');
    const {
      rows: [held],
    } = await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Asked on a session of its own: within the lock's transaction, pg_stat_activity would not change.
    const observer = await postgresSession(database.storeUrl);
    let replied: string | undefined;
    const refusal = send(JSON.stringify(notificationBody({ sessionId: 'S-held', accountNumber: '012345678' }))).then(
      (code) => (replied = code),
    );
    // The keep is waiting in the database.
    await waitFor(async () =>
      (await observer.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [held!.pid])).rowCount
        ? true
        : undefined,
    );
    // The money path does not wait for the quarantine's connection.
    expect(await send(JSON.stringify(notificationBody()))).toBe('00');
    expect(replied).toBeUndefined();
    await session.query('ROLLBACK');
    expect(await refusal).toBe('02');
    expect((await database.quarantined()).map((row) => row.session_id)).toEqual(['S-held']);
  });
});

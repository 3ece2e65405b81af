import autocannon from 'autocannon';
import { createNotificationBodies, signedHeaders, WEBHOOK_PATH } from './bank.ts';
const next = createNotificationBodies();
const url = process.argv[2]!;
const r = await autocannon({ url: url + WEBHOOK_PATH, connections: 100, duration: Number(process.argv[3] ?? 8), method: 'POST',
  headers: { ...signedHeaders(), 'content-type': 'application/json' },
  requests: [{ setupRequest: (req: any) => ({ ...req, body: next().body }) }] });
console.log(r.requests.average, 'req/s p50', r.latency.p50, 'p99', r.latency.p99, 'non2xx', r.non2xx, 'errors', r.errors);

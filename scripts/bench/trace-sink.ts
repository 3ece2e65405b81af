// A stand-in OTLP/HTTP collector for `npm run bench -- --tracing`, in its own process so receiving
// spans costs the measured server nothing: it answers 200 to every export and counts what came.
// Forked by scripts/bench/tracing.ts; tells its port over IPC, answers 'stats' with its counts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const counts = { requests: 0, bytes: 0 };
const server = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (counts.bytes += chunk.length));
  request.on('end', () => {
    counts.requests += 1;
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});

if (!process.send) {
  console.error('scripts/bench/trace-sink.ts is started by npm run bench -- --tracing, not on its own.');
  process.exit(2);
}
process.on('disconnect', () => process.exit(0));
process.on('message', (message: { type: string }) => {
  if (message.type === 'stats') process.send!({ type: 'stats', ...counts });
});
server.listen(0, '127.0.0.1', () => process.send!({ type: 'listening', port: (server.address() as AddressInfo).port }));

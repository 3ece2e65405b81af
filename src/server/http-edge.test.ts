import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { createMetrics } from '../metrics.ts';
import { createHttpEdge } from './http-edge.ts';

describe('the HTTP edge while it drains', () => {
  it('answers a request pipelined behind one in flight with 503 after it, closes the connection, and times it under route="draining"', async () => {
    const metrics = createMetrics();
    const edge = createHttpEdge({ metrics, trustProxy: false });
    const inFlight = Promise.withResolvers<() => void>();
    const server = edge.serve((_request, response) => {
      inFlight.resolve(() => {
        response.end('served');
        edge.responded({ method: 'GET', route: '/slow', statusCode: 200 }, 0);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onCleanup(async () => server.closeAllConnections());
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    onCleanup(async () => void socket.destroy());
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const closed = once(socket, 'close');
    socket.write('GET /slow HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    const answer = await inFlight.promise;

    const drained = edge.drain(() => new Promise<void>((resolve) => server.close(() => resolve())));
    socket.write('GET /health/ready HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    // Its 503 waits on the wire behind the answer in flight: the metric is the only sign it was refused.
    await waitFor(async () => {
      const { values } = await metrics.httpRequestDuration.get();
      return values.some((v) => v.labels.route === 'draining' && v.labels.status_code === '503' && v.labels.method === 'GET')
        ? true
        : undefined;
    });
    answer();
    await closed;
    await drained;
    const responses = received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(responses.map((r) => r.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 503']);
    expect(responses[1]!.toLowerCase()).toContain('connection: close');
  });
});

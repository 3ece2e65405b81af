import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, signedHeaders } from './helpers/app.ts';
import { startSubgraphProcess, type SubgraphProcess } from './helpers/process.ts';
import { urlStoreBackends } from './helpers/stores.ts';

async function deliver(process: SubgraphProcess, body: Record<string, unknown>): Promise<string> {
  const response = await request(`${process.baseUrl}/webhooks/collection`, {
    method: 'POST',
    headers: signedHeaders(),
    body: JSON.stringify(body),
  });
  return ((await response.body.json()) as { responseCode: string }).responseCode;
}

// The bank treats 02 as final: a refused delivery must be in the quarantine before its 02 leaves, as
// a 00's notification is stored before its 00. Were it kept after the reply, a crash right after
// replies would lose what they refused.
describe.each(urlStoreBackends.filter((backend) => backend.enabled))('durability of the quarantine on $name', (backend) => {
  it('loses no delivery answered 02 when killed -9 with refusals in flight', async () => {
    const store = await backend.create();
    const subgraph = await startSubgraphProcess({ STORE_URL: store.storeUrl });
    const refused: string[] = [];
    let killed = false;
    // 40 senders, each delivering new refusals (9-digit accounts) back to back, until the process is killed.
    const sender = async () => {
      while (!killed) {
        const body = notificationBody({ accountNumber: '012345678' });
        const code = await deliver(subgraph, body).catch(() => undefined);
        if (code === '02') refused.push(body.sessionId);
        else if (code !== undefined) throw new Error(`unexpected reply ${code}`);
        if (refused.length >= 100 && !killed) {
          killed = true;
          subgraph.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 40 }, sender));
    expect((await subgraph.exited).signal).toBe('SIGKILL');

    const kept = new Set((await store.quarantined()).map((row) => row.session_id));
    expect(refused.filter((sessionId) => !kept.has(sessionId))).toEqual([]);
    // A process start on a loaded machine: more than the default allowance, never a timing check.
  }, 60_000);
});

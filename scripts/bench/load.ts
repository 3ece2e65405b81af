// A load process: forked by the orchestrator for one job, so the load generator has an event loop
// and heap of its own and takes no turns from the server's. It waits for its job, runs it, sends
// the result back and exits.
import { runConfirmedLatency } from './confirmed-latency.ts';
import { runFanout } from './fanout.ts';
import { runHttpJob } from './http-load.ts';
import type { ChildMessage, LoadJob, ParentMessage } from './protocol.ts';
import { runRawReads } from './raw-reader.ts';
import { runResume } from './resume.ts';
import { runStormReads } from './storm.ts';

const send = (message: ChildMessage) => new Promise<void>((resolve) => process.send!(message, undefined, {}, () => resolve()));

/** The next message of `type` from the orchestrator. */
function receive<T extends ParentMessage['type']>(type: T): Promise<Extract<ParentMessage, { type: T }>> {
  return new Promise((resolve) => {
    const listener = (message: ParentMessage) => {
      if (message.type !== type) return;
      process.off('message', listener);
      resolve(message as Extract<ParentMessage, { type: T }>);
    };
    process.on('message', listener);
  });
}

async function run(job: LoadJob): Promise<void> {
  let measuring = { cpu: process.cpuUsage(), at: performance.now() };
  const onMeasuring = () => {
    measuring = { cpu: process.cpuUsage(), at: performance.now() };
    void send({ type: 'measuring' });
  };
  const awaitLive = async (count: number) => {
    // Listening before asking, so even an instant answer is heard.
    const answer = receive('subscribers-live');
    await send({ type: 'await-subscribers', count });
    return answer;
  };
  try {
    const result =
      job.scenario === 'fanout'
        ? await runFanout(job, awaitLive, onMeasuring)
        : job.scenario === 'resume'
          ? await runResume(job, onMeasuring)
          : job.scenario === 'storm-reads'
            ? await runStormReads(job, onMeasuring)
            : job.scenario === 'raw-reads'
              ? await runRawReads(job, onMeasuring)
              : job.scenario === 'confirmed-latency'
                ? await runConfirmedLatency(job, onMeasuring)
                : await runHttpJob(job, onMeasuring);
    const cpu = process.cpuUsage(measuring.cpu);
    const loadCpuCores = (cpu.user + cpu.system) / 1000 / (performance.now() - measuring.at);
    await send({ type: 'result', result: { ...result, loadCpuCores } });
  } catch (error) {
    await send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  }
  // Keep-alive sockets and timers of the clients would hold the process open; the job is done.
  process.exit(0);
}

if (!process.send) {
  console.error('scripts/bench/load.ts is started by scripts/bench.ts (npm run bench), not on its own.');
  process.exit(2);
}
// The bench was stopped (Ctrl-C, a crash): nothing is left to report to.
process.on('disconnect', () => process.exit(1));
await run((await receive('run')).job);

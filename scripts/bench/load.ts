// The load process: forked by scripts/bench.ts for one scenario, so the load generator has its own
// event loop and heap and does not steal turns from the server's. It waits for its job, runs it,
// sends the result back and exits.
import { runFanout } from './fanout.ts';
import { runHttpScenario } from './http-load.ts';
import { runResume } from './resume.ts';
import type { ChildMessage, LoadJob, ParentMessage } from './protocol.ts';

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}

/** The next message of `type` from the server side. */
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
  try {
    const scenarioResult =
      job.scenario === 'fanout'
        ? await runFanout(job, async (count) => {
            // Listening before asking, so even an instant answer is heard.
            const answer = receive('subscribers-live');
            await send({ type: 'await-subscribers', count });
            return answer;
          }, onMeasuring)
        : job.scenario === 'resume'
          ? await runResume(job, onMeasuring)
          : await runHttpScenario(job, onMeasuring);
    const cpu = process.cpuUsage(measuring.cpu);
    const loadCpuCores = (cpu.user + cpu.system) / 1000 / (performance.now() - measuring.at);
    await send({ type: 'result', result: { ...scenarioResult, loadCpuCores } });
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
const { job } = await receive('run');
await run(job);

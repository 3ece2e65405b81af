// vitest's globalSetup: once per run, before any file, one line saying which service-backed suites
// will be skipped (and how to run them), instead of a silent skip in each file.
import { skippedServicesNotice } from './services.ts';

export default function setup(): void {
  const notice = skippedServicesNotice();
  if (notice !== undefined) process.stdout.write(`${notice}\n`);
}

// What the built image holds and how it starts, read off the image itself: the user, the command,
// Node from the base, and exactly the production dependencies the lockfile names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectImage, runOnce } from './podman.ts';

/** Lists every installed package's path under /app (`node_modules/a`, `node_modules/a/node_modules/b`, scoped ones too). */
const LIST_PACKAGES = `
const { existsSync, readdirSync } = require('node:fs');
const found = [];
const walk = (dir) => {
  if (!existsSync('/app/' + dir)) return;
  for (const name of readdirSync('/app/' + dir)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) { for (const inner of readdirSync('/app/' + dir + '/' + name)) visit(dir + '/' + name + '/' + inner); }
    else visit(dir + '/' + name);
  }
};
const visit = (path) => { if (existsSync('/app/' + path + '/package.json')) { found.push(path); walk(path + '/node_modules'); } };
walk('node_modules');
console.log(JSON.stringify({ packages: found, app: readdirSync('/app').sort(), uid: process.getuid(), node: process.version, execPath: process.execPath }));
`;

/** Each check's verdict, in the order they ran; throws with every failed one. */
export async function checkImageContents(image: string, repository: string): Promise<string[]> {
  const config = (await inspectImage(image)).Config;
  const seen = JSON.parse(await runOnce(image, ['node', '-e', LIST_PACKAGES])) as {
    packages: string[];
    app: string[];
    uid: number;
    node: string;
    execPath: string;
  };
  const lock = JSON.parse(readFileSync(join(repository, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }>;
  };
  const installed = new Set(seen.packages);
  const entries = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
  const devPresent = entries.filter(([path, entry]) => entry.dev && installed.has(path)).map(([path]) => path);
  const prodMissing = entries
    .filter(([path, entry]) => !entry.dev && !entry.optional && !entry.devOptional && !installed.has(path))
    .map(([path]) => path);
  const extra = seen.packages.filter((path) => !(path in lock.packages));

  const failures: string[] = [];
  const verdicts: string[] = [];
  const expect = (ok: boolean, verdict: string, failure: string) => (ok ? verdicts.push(verdict) : failures.push(failure));
  expect(
    config.User === '1000:1000' && seen.uid === 1000,
    `runs as uid ${seen.uid} (USER ${config.User})`,
    `runs as uid ${seen.uid} (USER ${config.User}), not 1000:1000`,
  );
  expect(
    JSON.stringify(config.Cmd) === '["node","src/main.ts"]' && !config.Entrypoint?.length,
    'CMD ["node","src/main.ts"]: Node is PID 1 and gets SIGTERM',
    `CMD ${JSON.stringify(config.Cmd)} ENTRYPOINT ${JSON.stringify(config.Entrypoint)}: not node as PID 1`,
  );
  expect(config.Env?.includes('NODE_ENV=production') === true, 'NODE_ENV=production', 'NODE_ENV=production is not set');
  expect(
    seen.node.startsWith('v24.') && !seen.execPath.startsWith('/app/'),
    `Node ${seen.node} from the base (${seen.execPath})`,
    `Node ${seen.node} at ${seen.execPath}: not the base's Node 24`,
  );
  expect(
    devPresent.length === 0,
    `no dev dependency (${entries.filter(([, entry]) => entry.dev).length} in the lockfile, none installed)`,
    `dev dependencies in the image: ${devPresent.slice(0, 10).join(', ')}`,
  );
  expect(
    prodMissing.length === 0 && extra.length === 0,
    `the lockfile's ${seen.packages.length} production packages, nothing else`,
    `production packages missing: ${prodMissing.slice(0, 10).join(', ') || 'none'}; not in the lockfile: ${extra.slice(0, 10).join(', ') || 'none'}`,
  );
  const appFiles = ['data', 'node_modules', 'package.json', 'schema', 'src'];
  expect(
    JSON.stringify(seen.app) === JSON.stringify(appFiles),
    `/app holds ${appFiles.join(', ')}`,
    `/app holds ${seen.app.join(', ')}, not ${appFiles.join(', ')}`,
  );
  const tests = await runOnce(image, ['find', '/app/src', '-name', '*.test.ts']);
  expect(tests.trim() === '', 'no test files', `test files in the image: ${tests.trim().split('\n').slice(0, 5).join(', ')}`);
  if (failures.length > 0) throw new Error(`the image:\n  - ${failures.join('\n  - ')}`);
  return verdicts;
}

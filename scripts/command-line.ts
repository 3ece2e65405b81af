// The scripts' command lines, read one way: node's parseArgs, `--help` printing the usage.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/**
 * The options given on the command line. With `--help` (an option every script declares), prints
 * `usage` and exits 0; an option parseArgs refuses is handed to `fail` with its message.
 */
export function readCommandLine<const Options extends ParseArgsOptionsConfig & { help: { type: 'boolean' } }>(
  options: Options,
  usage: string,
  fail: (message: string) => never,
): ReturnType<typeof parseArgs<{ options: Options }>>['values'] {
  let values: ReturnType<typeof parseArgs<{ options: Options }>>['values'];
  try {
    values = parseArgs({ options }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
  if ((values as { help?: boolean }).help === true) {
    console.log(usage);
    process.exit(0);
  }
  return values;
}

import { parseArgs } from 'node:util';

/**
 * The bench scripts' options (`parseArgs`): an option a script does not know, or one without its
 * value, is one line and exit 2, with the usage (not a stack trace); `--help` prints the usage.
 */
export function optionsOrExit(script, options, usage) {
  try {
    const { values } = parseArgs({ options: { ...options, help: { type: 'boolean', default: false } } });
    if (values.help) {
      process.stdout.write(usage);
      process.exit(0);
    }
    return values;
  } catch (err) {
    process.stderr.write(`${script}: ${err.message}\n${usage}`);
    process.exit(2);
  }
}

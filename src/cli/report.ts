/** `evalctl report <run> [--json] [--outputs DIR]`: rebuilds the run's report.json and prints it. */
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { writeReport } from '../store/report.js';
import { parseCliArgs } from './args.js';
import { renderReport } from './report-text.js';
import { runDirOf } from './run-dir-arg.js';

const USAGE = 'usage: evalctl report <run-id | run-dir> [--json] [--outputs DIR]';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    {
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { json: { type: 'boolean' }, outputs: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    },
    USAGE,
  );
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const report = await writeReport(runDirOf(positionals[0], values.outputs ?? DEFAULT_OUTPUTS_DIR, USAGE));
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : renderReport(report));
  return 0;
}

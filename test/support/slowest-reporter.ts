/**
 * Prints the slowest test files and tests at the end of a run, so the suite's cost stays in
 * sight on CI (it runs on 2 cores within a time limit).
 */
import type { Reporter, TestCase, TestModule } from 'vitest/node';

const SHOWN = 10;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export default class SlowestReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (testModules.length === 0) return;
    const files = testModules
      .map((m) => ({ name: m.moduleId.replace(`${process.cwd()}/`, ''), ms: m.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SHOWN);
    const tests: { name: string; ms: number }[] = [];
    for (const m of testModules) {
      for (const t of m.children.allTests() as Iterable<TestCase>) {
        const ms = t.diagnostic()?.duration;
        if (ms !== undefined) tests.push({ name: `${t.module.moduleId.replace(`${process.cwd()}/`, '')} › ${t.fullName}`, ms });
      }
    }
    tests.sort((a, b) => b.ms - a.ms);
    const lines = ['', `Slowest ${files.length} test files:`, ...files.map((f) => `  ${seconds(f.ms).padStart(8)}  ${f.name}`)];
    lines.push(
      `Slowest ${Math.min(SHOWN, tests.length)} tests:`,
      ...tests.slice(0, SHOWN).map((t) => `  ${seconds(t.ms).padStart(8)}  ${t.name}`),
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

/**
 * Scripted agents for the stand-in model: a conversation whose user message starts with
 * `Task <id>:` (the built-in shell_tasks dataset) gets, turn by turn, the tool calls listed for
 * that id, then the final answer. Most solve their task; `fix-max` and `sum-values` make the
 * mistake a small model would, so a run has failures with the check's output to read. Tasks with
 * no script fall to the stub's generic rules.
 */
export interface StubScript {
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** The final answer; absent: the last tool result. */
  answer?: string;
}

const bash = (command: string) => ({ name: 'bash', arguments: { command } });

export const STUB_SCRIPTS: Readonly<Record<string, StubScript>> = {
  'find-flag': { calls: [bash('grep -rho "FLAG{[^}]*}" .')] },
  'decode-flag': { calls: [{ name: 'read_file', arguments: { path: 'secret.b64' } }, bash('base64 -d secret.b64')] },
  'sum-values': { calls: [bash('cat data/a.txt data/b.txt')], answer: '42' },
  'extract-port': { calls: [bash("awk -F' = ' '/^\\[service\\]/{s=1} s&&/^port/{print $2; exit}' config.ini")] },
  'count-errors': { calls: [bash('grep -c ERROR app.log')] },
  'setup-sum': { calls: [{ name: 'python', arguments: { code: "print(sum(int(l) for l in open('numbers.txt')))" } }] },
  'fix-add': {
    calls: [
      { name: 'read_file', arguments: { path: 'calc.py' } },
      { name: 'write_file', arguments: { path: 'calc.py', content: 'def add(a, b):\n    return a + b\n' } },
      bash('python3 test_calc.py'),
    ],
    answer: 'Fixed: add returns a + b.',
  },
  'fix-reverse': { calls: [bash("sed -i 's/s\\[::1\\]/s[::-1]/' text.py && python3 test_text.py")], answer: 'done' },
  'fix-max': { calls: [bash("sed -i 's/\\[0\\]/[1]/' stats.py")], answer: 'done' },
  'repair-json': { calls: [bash("sed -i 's/4,$/4/' config.json && cat config.json")], answer: 'done' },
  'rename-draft': { calls: [bash('mv draft.txt final.txt')], answer: 'renamed' },
  'make-executable': { calls: [bash('chmod +x run.sh && ./run.sh')] },
  'sort-names': { calls: [bash('sort names.txt > sorted.txt')], answer: 'done' },
  'csv-total': {
    calls: [bash("tail -n +2 sales.csv | cut -d, -f2 | paste -sd+ | bc 2>/dev/null || awk -F, 'NR>1{s+=$2} END{print s}' sales.csv")],
  },
};

/** The script of a conversation whose user message names a scripted task. */
export function scriptFor(userText: string): StubScript | undefined {
  const m = /^Task ([a-z0-9-]+):/.exec(userText.trim());
  return m && Object.hasOwn(STUB_SCRIPTS, m[1]!) ? STUB_SCRIPTS[m[1]!] : undefined;
}

/** A text table for the CLI's summaries: the first row is the header, underlined; the first column left-aligned, numbers right-aligned. */
export function textTable(rows: string[][], indent = '  '): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const out: string[] = [];
  for (const [i, r] of rows.entries()) {
    out.push(indent + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
    if (i === 0) out.push(indent + widths.map((w) => '─'.repeat(w)).join('  '));
  }
  return out;
}

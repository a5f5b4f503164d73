/** `evalctl nodesets` (not built yet). */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('evalctl nodesets: not available yet\n');
  return 1;
}

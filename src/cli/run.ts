/** `evalctl run` (not built yet). */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('evalctl run: not available yet\n');
  return 1;
}

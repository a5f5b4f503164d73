/** `evalctl validate` (not built yet). */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('evalctl validate: not available yet\n');
  return 1;
}

/**
 * Runs axe-core inside a page and returns the violations a user of assistive technology or a
 * low-vision reader would hit hardest (impact serious or critical), one readable line each.
 */
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_PATH = require.resolve('axe-core/axe.min.js');

interface AxeNode {
  target: unknown[];
  failureSummary?: string;
}
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: AxeNode[];
}

/** The serious and critical violations on the page as it is now, formatted `rule: node: why`. */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.addScriptTag({ path: AXE_PATH });
  // A string, so that nothing the test's compiler adds reaches the browser.
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })))`,
  )) as AxeViolation[];
  const out: string[] = [];
  for (const v of violations) {
    if (v.impact !== 'serious' && v.impact !== 'critical') continue;
    for (const n of v.nodes)
      out.push(`${v.id} (${v.impact}): ${n.target.join(' ')}: ${(n.failureSummary ?? v.help).replace(/\s+/g, ' ').trim()}`);
  }
  return out;
}

/** Fails the test, listing each offending node, when the page has a serious or critical violation. */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  const found = await seriousA11yViolations(page);
  if (found.length) throw new Error(`${found.length} serious or critical accessibility violation(s) on ${where}:\n${found.join('\n')}`);
}

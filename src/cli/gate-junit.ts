/**
 * The gate as a JUnit XML report (`evalctl gate --junit FILE`): one <testsuite> for the
 * comparison, one <testcase> per metric. A failed metric carries <failure type="fail">; an
 * inconclusive one <failure type="inconclusive"> too, since the gate does not pass on it.
 */
import type { GateResult, MetricGateVerdict } from '../compare/gate-verdicts.js';

/** XML text or attribute value, with the characters XML 1.0 cannot hold at all dropped. */
function esc(s: string): string {
  return s
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function details(m: MetricGateVerdict): string {
  const ci = m.interval ? `[${m.interval[0]}, ${m.interval[1]}]` : 'none';
  return [
    `requirement: ${m.requirement} (${m.question})`,
    `pairs: ${m.n}; baseline mean ${m.baselineMean}; candidate mean ${m.candidateMean}; difference ${m.meanDiff}`,
    `anytime-valid interval (${m.method}, level ${1 - m.level}): ${ci}`,
    `MDE at this n: ${m.mde}; fixed-n episodes needed: ${m.episodesNeeded}`,
    m.reason,
  ].join('\n');
}

function testcase(g: GateResult, m: MetricGateVerdict): string {
  const open = `    <testcase classname="${esc(`gate.${g.candidateRunId}`)}" name="${esc(`${m.metric}: ${m.requirement}`)}" time="0"`;
  if (m.verdict === 'pass') return `${open}>\n      <system-out>${esc(details(m))}</system-out>\n    </testcase>`;
  return `${open}>\n      <failure type="${m.verdict}" message="${esc(`${m.verdict}: ${m.reason}`)}">${esc(details(m))}</failure>\n    </testcase>`;
}

export function gateJunitXml(g: GateResult): string {
  const failures = g.metrics.filter((m) => m.verdict !== 'pass').length;
  const tests = g.metrics.length;
  const name = esc(`gate ${g.candidateRunId} vs ${g.baselineRunId}`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="evalctl gate" tests="${tests}" failures="${failures}" errors="0" skipped="0" time="0">`,
    `  <testsuite name="${name}" tests="${tests}" failures="${failures}" errors="0" skipped="0" time="0">`,
    '    <properties>',
    `      <property name="verdict" value="${g.verdict}"/>`,
    `      <property name="alpha" value="${g.alpha}"/>`,
    `      <property name="correction" value="${g.correction}"/>`,
    '    </properties>',
    ...g.metrics.map((m) => testcase(g, m)),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

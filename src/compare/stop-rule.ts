/**
 * The stop rule a run's stopWhen asks for (run-spec.ts): the requirement a `decided` rule judges
 * (the one given, else the primary metric better than the baseline) or the metric whose
 * half-width a `halfwidth` rule watches. Shared by the submit checks and the eval process.
 */
import type { MetricRanges } from '../core/types.js';
import { BadInputError } from '../errors.js';
import type { RunSpec } from '../store/types.js';
import { checkAgainstGoal, defaultRequirement, parseRequirement } from './gate-requirement.js';
import type { StopRule } from './stop-decision.js';

/** The stop rule a spec's stopWhen asks for, with the metric it watches. BAD_USER_INPUT where it names nothing the run reports. */
export function stopRuleOf(stopWhen: NonNullable<RunSpec['stopWhen']>, ranges: MetricRanges | undefined): StopRule {
  const names = Object.keys(ranges ?? {});
  const primary = names.find((m) => ranges?.[m]?.primary) ?? names.find((m) => ranges?.[m]?.goal !== undefined) ?? names[0];
  const given = stopWhen.requirements?.[0];
  const requirement = given !== undefined ? parseRequirement(given) : undefined;
  if (stopWhen.when === 'decided') {
    if (requirement) {
      checkAgainstGoal(requirement, ranges?.[requirement.metric]?.goal ?? null);
      return { kind: 'decided', requirement };
    }
    const goal = primary === undefined ? undefined : ranges?.[primary]?.goal;
    if (primary === undefined || goal === undefined)
      throw new BadInputError('stopWhen "decided": no metric of this graph declares a goal; give a requirement, e.g. "success > 0"');
    return { kind: 'decided', requirement: defaultRequirement(primary, goal) };
  }
  const metric = stopWhen.metric ?? requirement?.metric ?? primary;
  if (metric === undefined) throw new BadInputError('stopWhen halfwidth: say which metric to watch (stopWhen.metric)');
  return { kind: 'halfwidth', metric, halfwidth: stopWhen.when.halfwidth };
}

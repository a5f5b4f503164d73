import type { TaskAggregate } from '../api/fragments.js';
import { fmtNumber } from '../lib/format.js';
import { shownStderr } from '../lib/metrics.js';

/** Aggregates per task: one row per task, mean ± stderr per metric. */
export function TaskTable({ tasks }: { tasks: TaskAggregate[] }) {
  const names = [...new Set(tasks.flatMap((t) => t.metrics.map((m) => m.name)))];
  return (
    <div className="table-wrap">
      <table className="grid compact" data-testid="task-table">
        <thead>
          <tr>
            <th>task</th>
            <th className="num">n</th>
            {names.map((n) => (
              <th key={n} className="num">
                {n}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {tasks
            .filter((t) => t.metrics.length > 0)
            .map((t) => (
              <tr key={t.task}>
                <td>{t.task}</td>
                <td className="num">{Math.max(0, ...t.metrics.map((m) => m.count))}</td>
                {names.map((n) => {
                  const m = t.metrics.find((x) => x.name === n);
                  return (
                    <td key={n} className="num">
                      {m ? (
                        <>
                          {fmtNumber(m.mean)} {shownStderr(m) != null && <span className="muted">± {fmtNumber(shownStderr(m), 2)}</span>}
                        </>
                      ) : (
                        '–'
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}

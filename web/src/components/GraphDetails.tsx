import type { GraphInfo, NodesetInfo } from '../api/queries.js';
import { Json } from './Json.js';

/** A graph's nodes with their nodesets (and whether each is shared or replicated) and config. */
export function GraphDetails({ graph, nodesets }: { graph: GraphInfo; nodesets: NodesetInfo[] }) {
  const byName = new Map(nodesets.map((n) => [n.name, n]));
  return (
    <div className="graph-details" data-testid="graph-details">
      {graph.description && <p>{graph.description}</p>}
      <p className="muted">
        {graph.nodes.length} nodes · {graph.edges.length} edges ({graph.edges.filter((e) => e.loop).length} loop)
        {graph.stepBudget != null && <> · graph step budget {graph.stepBudget}</>}
      </p>
      <div className="table-wrap">
        <table className="grid compact">
          <thead>
            <tr>
              <th>node</th>
              <th>type</th>
              <th>nodeset</th>
              <th>config</th>
            </tr>
          </thead>
          <tbody>
            {graph.nodes.map((n) => {
              const ns = n.nodeset ? byName.get(n.nodeset) : undefined;
              return (
                <tr key={n.id}>
                  <td className="mono">{n.id}</td>
                  <td className="mono small">{n.type}</td>
                  <td>
                    {n.nodeset ? (
                      <>
                        {n.nodeset} {ns && <span className={`tag ${ns.parallelism.toLowerCase()}`}>{ns.parallelism.toLowerCase()}</span>}
                      </>
                    ) : (
                      <span className="muted">built-in</span>
                    )}
                  </td>
                  <td>
                    {n.config && Object.keys(n.config).length ? (
                      <Json value={n.config} maxChars={2000} />
                    ) : (
                      <span className="muted">–</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}

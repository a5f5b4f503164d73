import { Component, type ReactNode } from 'react';
import { ErrorBox } from './components/States.js';
import { href, useHashRoute, type Route } from './hooks/useHashRoute.js';
import { ComparePage } from './pages/ComparePage.js';
import { NewRunPage } from './pages/NewRunPage.js';
import { PlayPage } from './pages/PlayPage.js';
import { QueuePage } from './pages/QueuePage.js';
import { RunPage } from './pages/RunPage.js';
import { RunsPage } from './pages/RunsPage.js';
import { SweepPage } from './pages/SweepPage.js';
import { WorkersPage } from './pages/WorkersPage.js';

const NAV: Array<{ label: string; to: string; active: (r: Route) => boolean }> = [
  { label: 'Runs', to: href.runs(), active: (r) => r.page === 'runs' || r.page === 'run' || r.page === 'compare' || r.page === 'sweep' },
  { label: 'Queue', to: href.queue(), active: (r) => r.page === 'queue' },
  { label: 'Workers', to: href.workers(), active: (r) => r.page === 'workers' },
  { label: 'New run', to: href.newRun(), active: (r) => r.page === 'new' },
  { label: 'Play', to: href.play(), active: (r) => r.page === 'play' },
];

export function App() {
  const route = useHashRoute();
  return (
    <div className="app">
      <nav className="topbar">
        <a className="brand" href={href.runs()}>
          batch<span>·</span>eval
        </a>
        <ul>
          {NAV.map((n) => (
            <li key={n.label}>
              <a href={n.to} className={n.active(route) ? 'active' : undefined} aria-current={n.active(route) ? 'page' : undefined}>
                {n.label}
              </a>
            </li>
          ))}
        </ul>
        <a className="topbar-link" href="/graphql" target="_blank" rel="noreferrer">
          GraphiQL
        </a>
      </nav>
      <main>
        <PageBoundary key={pageKey(route)}>
          <Page route={route} />
        </PageBoundary>
      </main>
    </div>
  );
}

/** A new key draws the page afresh: another run, another comparison, filters from the address (back/forward). */
function pageKey(route: Route): string {
  switch (route.page) {
    case 'run':
      return `run:${route.runId}`;
    case 'runs':
      return `runs:${JSON.stringify(route.filters)}`;
    case 'sweep':
      return `sweep:${route.sweepId}`;
    case 'compare':
      return `compare:${route.baseline}:${route.candidates.join(',')}`;
    case 'new':
      return `new:${route.from ?? ''}`;
    default:
      return route.page;
  }
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'runs':
      return <RunsPage initial={route.filters} />;
    case 'sweep':
      return <SweepPage sweepId={route.sweepId} />;
    case 'compare':
      return <ComparePage baseline={route.baseline} candidates={route.candidates} />;
    case 'run':
      return <RunPage runId={route.runId} episode={route.episode} />;
    case 'queue':
      return <QueuePage />;
    case 'workers':
      return <WorkersPage />;
    case 'new':
      return <NewRunPage initialGraph={route.graph} fromRun={route.from} />;
    case 'play':
      return <PlayPage initialGraph={route.graph} />;
    case 'notFound':
      return <ErrorBox title="No such page" error={`Nothing lives at ${route.hash}.`} />;
  }
}

/** A page that throws shows its error in place instead of blanking the whole dashboard. */
class PageBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state = { error: null as Error | null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override render() {
    if (this.state.error)
      return <ErrorBox title="This page failed to draw" error={this.state.error} onRetry={() => this.setState({ error: null })} />;
    return this.props.children;
  }
}

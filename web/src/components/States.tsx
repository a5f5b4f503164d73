/** Loading, empty and error states, so every page says plainly what is going on. */
import type { ReactNode } from 'react';
import type { GraphQLRequestError } from '../api/client.js';

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <div className="state state-loading" role="status">
      <span className="spinner" aria-hidden /> {what}…
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state state-empty">{children}</div>;
}

export function ErrorBox({
  error,
  title = 'Something went wrong',
  onRetry,
}: {
  error: GraphQLRequestError | Error | string;
  title?: string;
  onRetry?: () => void;
}) {
  const msg = typeof error === 'string' ? error : error.message;
  const code = typeof error === 'object' && 'code' in error ? (error as GraphQLRequestError).code : undefined;
  return (
    <div className="state state-error" role="alert">
      <strong>{title}</strong>
      <p>
        {msg}
        {code && <span className="code"> ({code})</span>}
      </p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

/** An episode's event history as a conversation: messages, model replies with their cost, tool calls and their results. */
import { EPISODE_EVENTS } from '../api/queries.js';
import { useQuery } from '../hooks/useQuery.js';
import { type ChatItem, conversationOf, conversationTotals, prettyArguments } from '../lib/conversation.js';
import { fmtDuration, fmtNumber } from '../lib/format.js';
import { Json } from './Json.js';
import { ErrorBox, Loading } from './States.js';

/** Events asked for at once: the server's largest page. */
const EVENTS_PAGE = 2000;

/** The conversation section of the episode drawer; absent for an episode without events (a non-model graph). */
export function EpisodeConversation({ runId, index }: { runId: string; index: number }) {
  const q = useQuery(EPISODE_EVENTS, { id: runId, index, first: EVENTS_PAGE });
  const page = q.data?.run?.episode?.events;
  const events = page?.events;
  if (q.error && !events) return <ErrorBox error={q.error} title="The event history could not be loaded" onRetry={q.refetch} />;
  if (!events)
    return q.loading ? (
      <div data-testid="conversation-loading">
        <Loading what="Loading the event history" />
      </div>
    ) : null;
  if (events.length === 0) return null;
  return <Conversation events={events} total={page?.total ?? events.length} />;
}

export function Conversation({ events, total }: { events: readonly unknown[]; total: number }) {
  const items = conversationOf(events);
  const t = conversationTotals(items);
  return (
    <section data-testid="conversation">
      <h3>
        Conversation{' '}
        <span className="muted small">
          {t.calls} model call{t.calls === 1 ? '' : 's'} · {fmtNumber(t.promptTokens)} → {fmtNumber(t.completionTokens)} tokens ·{' '}
          {fmtDuration(t.latencyMs)}
          {t.toolCalls > 0 && ` · ${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}`}
          {t.cached > 0 && ` · ${t.cached} cached`}
          {t.retries > 0 && ` · ${t.retries} retr${t.retries === 1 ? 'y' : 'ies'}`}
        </span>
      </h3>
      <ol className="chat">
        {items.map((it) => (
          <ChatEntry key={it.key} item={it} />
        ))}
      </ol>
      {total > events.length && (
        <p className="muted small">
          The first {events.length} of {total} events are shown; the rest are in the episode's events.jsonl.
        </p>
      )}
    </section>
  );
}

function Where({ item }: { item: ChatItem }) {
  return (
    <span className="chat-where muted small">
      {item.step != null && `step ${item.step} · `}
      {item.nodeId}
    </span>
  );
}

function ChatEntry({ item }: { item: ChatItem }) {
  switch (item.kind) {
    case 'message':
      return (
        <li className={`chat-msg chat-${item.role}`} data-role={item.role}>
          <div className="chat-head">
            <b>{item.role}</b>
            {item.toolCallId && <span className="mono small muted">{item.toolCallId}</span>}
            <Where item={item} />
          </div>
          <div className="chat-text">{item.content}</div>
        </li>
      );
    case 'assistant':
      return (
        <li className="chat-msg chat-assistant" data-role="assistant">
          <div className="chat-head">
            <b>assistant</b>
            {item.model && <span className="mono small">{item.model}</span>}
            {item.promptTokens != null && (
              <span className="chip" title="prompt → completion tokens">
                {fmtNumber(item.promptTokens)} → {fmtNumber(item.completionTokens ?? 0)} tok
              </span>
            )}
            {item.latencyMs != null && (
              <span className="chip" title="latency">
                {fmtDuration(item.latencyMs)}
              </span>
            )}
            {item.cached && (
              <span className="chip chip-cached" data-testid="badge-cached" title="answered from the response cache">
                cached
              </span>
            )}
            {item.retries > 0 && (
              <span className="chip chip-retry" data-testid="badge-retries" title="retries before this answer">
                {item.retries} retr{item.retries === 1 ? 'y' : 'ies'}
              </span>
            )}
            <Where item={item} />
          </div>
          {item.content && <div className="chat-text">{item.content}</div>}
          {item.toolCalls.length > 0 && (
            <ul className="chat-calls">
              {item.toolCalls.map((c) => (
                <li key={c.id} className="mono small" data-testid="tool-call-request">
                  → {c.name}({prettyArguments(c.arguments)})
                </li>
              ))}
            </ul>
          )}
        </li>
      );
    case 'tool':
      return (
        <li className={`chat-msg chat-tool${item.failed ? ' chat-failed' : ''}`} data-role="tool" data-testid="tool-result">
          <div className="chat-head">
            <b>tool</b>
            <span className="mono">
              {item.name}({prettyArguments(item.arguments)})
            </span>
            {item.exitCode != null && <span className="chip">exit {item.exitCode}</span>}
            {item.durationMs != null && <span className="chip">{fmtDuration(item.durationMs)}</span>}
            {item.timedOut && <span className="chip chip-retry">timed out</span>}
            <Where item={item} />
          </div>
          <pre className="chat-text mono">{item.result || '(no output)'}</pre>
          {item.stderr && !item.failed && (
            <details>
              <summary>stderr</summary>
              <pre className="mono small">{item.stderr}</pre>
            </details>
          )}
        </li>
      );
    case 'notice':
      return (
        <li className={`chat-notice chat-notice-${item.level}`} data-testid="chat-notice">
          <span>{item.text}</span> <Where item={item} />
          {item.level === 'info' && (
            <details>
              <summary>show</summary>
              <Json value={item.event} maxChars={4000} />
            </details>
          )}
        </li>
      );
  }
}

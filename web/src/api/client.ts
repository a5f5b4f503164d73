/**
 * The dashboard's only ways to reach the server: `gql()` for queries and mutations over
 * HTTP, `subscribe()` for subscriptions over one shared graphql-ws connection.
 */
import { print, type DocumentNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import type { TadaDocumentNode } from './graphql.js';

export const GRAPHQL_PATH = '/graphql';

const TOKEN_KEY = 'evalApiToken';

/**
 * The API token for a server bound beyond loopback: opened once as `/?token=…`, then kept for
 * the tab's session and dropped from the address bar so it is not shared with a copied link.
 */
export function apiToken(): string | null {
  const url = new URL(location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete('token');
    history.replaceState(null, '', url.toString());
    return fromUrl;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Adds the token to a URL the browser fetches by itself (an <img src>), where no header can be set. */
export function withToken(href: string): string {
  const token = apiToken();
  if (!token) return href;
  return `${href}${href.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}`;
}

export interface GraphQLErrorItem {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: Record<string, unknown>;
}

/** A request the server answered with `errors` (or could not answer at all). */
export class GraphQLRequestError extends Error {
  readonly errors: GraphQLErrorItem[];
  /** `extensions.code` of the first error, e.g. BAD_USER_INPUT. */
  readonly code: string | undefined;
  constructor(errors: GraphQLErrorItem[]) {
    super(errors.map((e) => e.message).join('; ') || 'request failed');
    this.name = 'GraphQLRequestError';
    this.errors = errors;
    const code = errors[0]?.extensions?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

const texts = new WeakMap<object, string>();

/** A document's text as sent, printed once per document. */
export function documentText(doc: DocumentNode): string {
  let text = texts.get(doc);
  if (text === undefined) {
    text = print(doc);
    texts.set(doc, text);
  }
  return text;
}

export async function gql<T, V>(doc: TadaDocumentNode<T, V>, variables?: V, signal?: AbortSignal): Promise<T> {
  const query = documentText(doc);
  let res: Response;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
  };
  const token = apiToken();
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    res = await fetch(GRAPHQL_PATH, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query, variables }),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new GraphQLRequestError([
      { message: `the server cannot be reached (${(err as Error).message})`, extensions: { code: 'NETWORK' } },
    ]);
  }
  let body: { data?: T | null; errors?: GraphQLErrorItem[] };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new GraphQLRequestError([
      { message: `the server answered ${res.status} ${res.statusText} without GraphQL data`, extensions: { code: 'HTTP' } },
    ]);
  }
  if (body.errors?.length) throw new GraphQLRequestError(body.errors);
  if (body.data == null) throw new GraphQLRequestError([{ message: `empty answer (HTTP ${res.status})` }]);
  return body.data;
}

let wsClient: Client | null = null;

function client(): Client {
  if (!wsClient) {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    wsClient = createClient({
      url: `${proto}//${location.host}${GRAPHQL_PATH}`,
      lazy: true,
      connectionParams: () => {
        const token = apiToken();
        return token ? { token } : {};
      },
      // Keep the socket a moment between pages so navigating does not reconnect.
      lazyCloseTimeout: 3_000,
      retryAttempts: Infinity,
      shouldRetry: () => true,
      retryWait: async (retries) => new Promise((r) => setTimeout(r, Math.min(5_000, 300 * 2 ** retries))),
    });
  }
  return wsClient;
}

export interface SubscriptionHandlers<T> {
  next(data: T): void;
  error?(err: GraphQLRequestError): void;
  complete?(): void;
}

/** Subscribes and returns the function that unsubscribes. */
export function subscribe<T, V>(doc: TadaDocumentNode<T, V>, variables: V, handlers: SubscriptionHandlers<T>): () => void {
  return client().subscribe<T>(
    { query: documentText(doc), variables: variables as Record<string, unknown> },
    {
      next: (msg) => {
        if (msg.errors?.length) handlers.error?.(new GraphQLRequestError(msg.errors as GraphQLErrorItem[]));
        else if (msg.data) handlers.next(msg.data as T);
      },
      error: (err) => {
        const items: GraphQLErrorItem[] = Array.isArray(err)
          ? (err as GraphQLErrorItem[])
          : [{ message: err instanceof Error ? err.message : 'the live connection closed' }];
        handlers.error?.(new GraphQLRequestError(items));
      },
      complete: () => handlers.complete?.(),
    },
  );
}

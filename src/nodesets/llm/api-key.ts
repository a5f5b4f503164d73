/**
 * The API key: read only from the environment variable a node's config names, and scrubbed from
 * every string that leaves the nodeset (errors, events), so it never reaches a log or a run directory.
 */
import { BadInputError } from '../../errors.js';

/** Sent to endpoints that need no key (api_key_env ""); the client requires some string. */
export const NO_KEY = 'no-key';

export class ApiKeyMissingError extends BadInputError {
  constructor(envName: string) {
    super(
      `the API key variable ${envName} is not set in the environment of the llm host; set it (any value for a server that needs no key) or set config api_key_env to ""`,
    );
  }
}

export function readApiKey(envName: string, env: NodeJS.ProcessEnv = process.env): string {
  if (envName === '') return NO_KEY;
  const key = env[envName];
  if (!key) throw new ApiKeyMissingError(envName);
  return key;
}

/** `text` with every occurrence of `key` replaced (keys shorter than 4 characters are not secrets worth a false match). */
export function redact(text: string, key: string): string {
  if (key.length < 4 || key === NO_KEY) return text;
  return text.split(key).join('[redacted]');
}

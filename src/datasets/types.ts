/** The sample shape every dataset is read into, whatever its file format. */

/** One chat message, as OpenAI-compatible chat APIs take it; extra keys (name, tool_call_id, …) pass through. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  [key: string]: unknown;
}

/** The expected answer: a string, a list of acceptable strings, a number, or a label (a string from the dataset's label set). */
export type SampleTarget = string | string[] | number;

export interface Sample {
  /** Stable within its split: the record's own `id`, else a hash of its content. */
  id: string;
  input: string | ChatMessage[];
  target?: SampleTarget;
  choices?: string[];
  /** Free; `cluster` names the group the sample belongs to (for clustered error bars and per-group tables). */
  metadata: Record<string, unknown>;
}

/** Where a dataset folder was found; a workspace folder hides a built-in one of the same name. */
export type DatasetSource = 'builtin' | 'workspace';

export interface Dataset {
  name: string;
  source: DatasetSource;
  dir: string;
  description?: string;
  /** The label set when targets are labels (dataset.json `labels`), in its declared order. */
  labels?: string[];
  /** Split names in the order their first sample was read (files sorted by name, records in file order). */
  splitNames: string[];
  /** Samples per split, in file order: sample i of a split is always the same sample. */
  splits: Record<string, Sample[]>;
  /** The split used when a run names none. */
  defaultSplit: string;
}

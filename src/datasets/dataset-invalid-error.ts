/** A dataset file that cannot be read as samples. */
import { CodedError } from '../errors.js';

export interface DatasetFault {
  /** The file, as given to the reader (absolute). */
  file: string;
  /** 1-based line (JSONL, JSON, CSV) or row (Parquet) of the bad record, when the fault is in one. */
  line?: number;
  /** What `line` counts: `line` for text files, `row` for Parquet. */
  unit?: 'line' | 'row';
  /** The record field at fault, e.g. `target` or `metadata.cluster`. */
  field?: string;
}

/** DATASET_INVALID: the message starts with `<file>:<line>` (or `row N`) and names the field. */
export class DatasetInvalidError extends CodedError {
  readonly file: string;
  readonly line: number | undefined;
  readonly field: string | undefined;
  /** Where, as given: with `problem`, enough to make the same error again (across a worker thread). */
  readonly fault: DatasetFault;
  readonly problem: string;
  constructor(fault: DatasetFault, problem: string, options?: { cause?: unknown }) {
    const where =
      fault.line === undefined ? fault.file : fault.unit === 'row' ? `${fault.file} row ${fault.line}` : `${fault.file}:${fault.line}`;
    super('DATASET_INVALID', `${where}: ${fault.field ? `field "${fault.field}": ` : ''}${problem}`, options);
    this.file = fault.file;
    this.line = fault.line;
    this.field = fault.field;
    this.fault = fault;
    this.problem = problem;
  }
}

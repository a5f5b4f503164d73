/** A record as a file reader hands it over: the parsed value and where it was. */
export interface RawRecord {
  value: unknown;
  /** 1-based line (text formats) or row (Parquet). */
  line: number;
}

/** How a file counts record positions in error messages. */
export type PositionUnit = 'line' | 'row';

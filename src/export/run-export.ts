/**
 * A run's downloads, each a stream read from its run directory as it is sent: the episodes
 * as CSV or JSONL (one record read at a time, so memory stays flat however many episodes),
 * the summary with its records (streamed the same way), and the whole directory as a tar.gz.
 */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { episodeRecords } from '../store/episode-records.js';
import { hasRecordsFile, readRecords } from '../store/records-file.js';
import { FILES, readSpec } from '../store/run-dir.js';
import { changedAfterFinish, recordedSummary } from '../store/summary-digest.js';
import { parseSummaryText } from '../store/summary-schema.js';
import { csvRow } from './csv-field.js';
import { headerOf, rowOf } from './episode-columns.js';
import { isSampleRecord, sampleColumnsOf } from './sample-columns.js';
import { listTree, tarChunks } from './ustar.js';

export const EXPORT_FORMATS = ['csv', 'jsonl', 'json', 'tar'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A format by its name or by its file extension (`tar.gz` is `tar`); undefined when it is neither. */
export function exportFormatOf(name: string): ExportFormat | undefined {
  return EXPORT_FORMATS.find((f) => f === name || EXPORT_TYPES[f].ext === name);
}

/** File extension and content type of each format. */
export const EXPORT_TYPES: Record<ExportFormat, { ext: string; contentType: string }> = {
  csv: { ext: 'csv', contentType: 'text/csv; charset=utf-8; header=present' },
  jsonl: { ext: 'jsonl', contentType: 'application/x-ndjson; charset=utf-8' },
  json: { ext: 'json', contentType: 'application/json; charset=utf-8' },
  tar: { ext: 'tar.gz', contentType: 'application/gzip' },
};

/** Bytes gathered before a chunk is handed on: one write per many rows, not one per row. */
const CHUNK_BYTES = 64 * 1024;

async function* batched(lines: AsyncIterable<string> | Iterable<string>): AsyncGenerator<string> {
  let buf = '';
  for await (const line of lines) {
    buf += line;
    if (buf.length >= CHUNK_BYTES) {
      yield buf;
      buf = '';
    }
  }
  if (buf !== '') yield buf;
}

/**
 * The episodes as CSV. Two passes over the records: the first finds the metric names the
 * header needs, the second writes the rows, of the episodes the first saw (an episode that
 * finishes in between is left out, so every row fits the header).
 */
export async function* csvLines(runDir: string, signal?: AbortSignal): AsyncGenerator<string> {
  const names = new Set<string>();
  const seen = new Set<number>();
  for await (const r of episodeRecords(runDir)) {
    signal?.throwIfAborted();
    seen.add(r.index);
    for (const m of Object.keys(r.metrics)) names.add(m);
  }
  const declared = (await readSpec(runDir).catch(() => null))?.metricRanges;
  const { header, metrics } = headerOf(names, declared);
  yield csvRow(header);
  for await (const r of episodeRecords(runDir)) {
    signal?.throwIfAborted();
    if (seen.has(r.index)) yield csvRow(rowOf(r, metrics));
  }
}

/**
 * The episodes as JSON Lines: each record as its episode.json holds it, one per line, in index
 * order; a dataset episode's line ends with the flat `input`, `target`, `answer` and `extracted`
 * of the CSV, so a reader need not dig them out of `scores`.
 */
export async function* jsonlLines(runDir: string, signal?: AbortSignal): AsyncGenerator<string> {
  for await (const r of episodeRecords(runDir)) {
    signal?.throwIfAborted();
    yield JSON.stringify(isSampleRecord(r) ? { ...r, ...sampleColumnsOf(r) } : r) + '\n';
  }
}

/**
 * summary.json as the run wrote it, after checking it is a valid summary (SUMMARY_INVALID
 * otherwise); for a finished run whose summary.json was changed since, the state recorded at its
 * finish with `"summaryModified": true`, never the edited file.
 */
export async function summaryText(runDir: string): Promise<string> {
  let text = '';
  for await (const chunk of await summaryChunks(runDir)) text += chunk;
  return text;
}

/** Stands in for the records while the summary's other fields are serialised; JSON escapes the NUL, so no field's text holds it raw. */
const SLOT = '\u0000episodes';

/**
 * The summary as JSON with its records as `episodes`: summary.json as it is on disk when it holds
 * them (a run written before records.jsonl), else summary.json with records.jsonl's records
 * streamed into it in index order, one at a time. The first chunk is ready before any record is
 * read, so a summary that is not valid fails before the first byte.
 */
export async function summaryChunks(runDir: string, signal?: AbortSignal): Promise<AsyncIterable<string> | Iterable<string>> {
  const path = join(runDir, FILES.summary);
  const text = await readFile(path, 'utf8');
  const modified = await changedAfterFinish(runDir, text);
  if (modified) return [JSON.stringify(await recordedSummary(runDir, modified), null, 2) + '\n'];
  const head = parseSummaryText(text, { source: `${FILES.summary} of run ${basename(runDir)}` });
  if (head.episodes.length > 0 || !hasRecordsFile(runDir)) return [text.endsWith('\n') ? text : text + '\n'];
  const { episodes: _none, ...fields } = JSON.parse(text) as Record<string, unknown>;
  const framed = JSON.stringify({ ...fields, episodes: SLOT }, null, 2);
  const at = framed.indexOf(JSON.stringify(SLOT));
  return (async function* () {
    yield `${framed.slice(0, at)}[`;
    let first = true;
    for await (const r of readRecords(runDir, signal)) {
      yield `${first ? '' : ','}\n    ${JSON.stringify(r, null, 2).replaceAll('\n', '\n    ')}`;
      first = false;
    }
    yield `${first ? '' : '\n  '}]${framed.slice(at + JSON.stringify(SLOT).length)}\n`;
  })();
}

/** The export of a run directory as a byte stream. Fails before the first byte for a missing summary (json) and lets the stream carry later errors. */
export async function exportStream(runDir: string, format: ExportFormat, signal?: AbortSignal): Promise<Readable> {
  switch (format) {
    case 'csv':
      return Readable.from(batched(csvLines(runDir, signal)));
    case 'jsonl':
      return Readable.from(batched(jsonlLines(runDir, signal)));
    case 'json':
      return Readable.from(batched(await summaryChunks(runDir, signal)));
    case 'tar': {
      const entries = await listTree(runDir, basename(runDir));
      const gzip = createGzip();
      // pipe() would not pass the source's errors on: the gzip stream ends with them instead.
      pipeline(Readable.from(tarChunks(entries, signal)), gzip).catch((err: unknown) => gzip.destroy(err as Error));
      return gzip;
    }
  }
}

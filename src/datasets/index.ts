/** Datasets: folders of sample files (JSONL, JSON, CSV, Parquet) read into samples per split. */
export { DatasetCatalog, type DatasetCatalogOptions, type DatasetEntry } from './dataset-catalog.js';
export { DatasetInvalidError } from './dataset-invalid-error.js';
export { loadDataset, dataFiles } from './load-dataset.js';
export { choiceLetter, formatChoices, messagesOf } from './messages-of.js';
export { contentId } from './sample-of.js';
export type { ChatMessage, Dataset, DatasetSource, Sample, SampleTarget } from './types.js';

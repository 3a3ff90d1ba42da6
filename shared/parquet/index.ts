// Public surface of Floe's Parquet layer: writing one Iceberg data file (a WAL segment) row group
// by row group, with field ids, the configured codec, footer statistics, optional bloom filters,
// and the Iceberg column metrics a manifest entry needs (row groups may be encoded on a pool of
// encoder threads); reading one back as rows of a table schema, and rewriting files into others
// of a target size on a thread of its own. Files not re-exported here
// (schema.ts, bounds.ts, statistics.ts, test-support.ts, and the rest of bloom.ts, codecs.ts,
// metrics.ts) are internal to shared/parquet.
export type { BloomFilterColumn } from './bloom.ts'
export type { DataFileCodec } from './codecs.ts'
export type { DataFileWriter, DataFileWriterOptions, OpenDataFileOptions } from './data-file.ts'
export { type DataFileReader, openDataFileReader } from './data-file-reader.ts'
export { openDataFile } from './data-file-writer.ts'
export { EncoderPool, type EncoderPoolOptions, type RowGroupEncoders } from './encoder-pool.ts'
export { FileRewriter, type FileRewriterOptions, type RewrittenFile } from './file-rewriter.ts'
export { primitiveFieldTypes, toDataFile } from './iceberg-data-file.ts'
export type { BloomFilterLocation, DataFileMetrics, MetricsConfig, MetricsMode } from './metrics.ts'
export { type ByteSink, fileSink, writableSink } from './sink.ts'

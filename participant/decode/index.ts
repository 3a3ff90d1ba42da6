// The participant's decode step: a Kafka record's JSON value (and, for `$kafka.*` columns, its
// coordinates) -> one row of the dataset's table through its customMapping (JMESPath) and Iceberg
// types, and the dead-letter
// record of a refused one. Files not re-exported here (mapping.ts, text.ts, the RecordDecoder
// class) are internal; decode.bench.ts is the benchmark, outside the tests.
export { compileDecoder } from './compile.ts'
export { DEFAULT_MAX_DEPTH, type Decoder, type DecoderOptions } from './decoder.ts'
export { dlqHeaders, dlqRecord, MAX_ERROR_HEADER_BYTES } from './dlq.ts'
export { MAX_INFERRED_FIELDS, SchemaWidening } from './inferring-decoder.ts'
export { BatchCoordinates, batchTimestampMs, type RecordCoordinates } from './kafka-columns.ts'
export { type DlqReason, dlqReasons, isDlqReason } from './reasons.ts'
export { RecordRoute } from './route.ts'

// Which decoder a dataset gets: its mapping's, or, without one, the one that infers its columns.
import type { DatasetConfig } from '../../shared/config/index.ts'
import type { Schema } from '../../shared/iceberg/index.ts'
import { type Decoder, type DecoderOptions, RecordDecoder } from './decoder.ts'
import { InferringDecoder } from './inferring-decoder.ts'

/** The dataset's decoder; one that infers its columns starts from the table's `schema`. */
export function compileDecoder(dataset: DatasetConfig, options: DecoderOptions, schema?: Schema): Decoder {
  if (dataset.inferColumns) return new InferringDecoder(dataset, options, schema ?? dataset.icebergSchema)
  return new RecordDecoder(dataset, options)
}

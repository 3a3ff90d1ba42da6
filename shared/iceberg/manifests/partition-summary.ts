// Partition field summaries of a manifest (manifest_file.partitions): per partition field, whether
// any entry has a null or NaN value, and the bounds of the others. Like Java's PartitionSummary,
// every entry counts, DELETED ones included.
import type { IcebergValue, StructValue } from '../types.ts'
import type { PartitionFieldSummary, SerializeBound } from './model.ts'
import type { PartitionFieldCodec } from './partition-fields.ts'

interface FieldStats {
  containsNull: boolean
  containsNan: boolean
  min: IcebergValue
  max: IcebergValue
}

export class PartitionSummaryBuilder {
  readonly #codecs: readonly PartitionFieldCodec[]
  readonly #serializeBound: SerializeBound
  readonly #stats: FieldStats[]

  constructor(codecs: readonly PartitionFieldCodec[], serializeBound: SerializeBound) {
    this.#codecs = codecs
    this.#serializeBound = serializeBound
    this.#stats = codecs.map(() => ({ containsNull: false, containsNan: false, min: null, max: null }))
  }

  add(partition: StructValue): void {
    for (let i = 0; i < this.#codecs.length; i += 1) {
      const codec = this.#codecs[i] as PartitionFieldCodec
      const stats = this.#stats[i] as FieldStats
      const value = partition[codec.field.name] ?? null
      if (value === null) stats.containsNull = true
      else if (codec.isNaN(value)) stats.containsNan = true
      else if (stats.min === null) {
        stats.min = value
        stats.max = value
      } else {
        if (codec.compare(value, stats.min) < 0) stats.min = value
        if (codec.compare(value, stats.max as IcebergValue) > 0) stats.max = value
      }
    }
  }

  summaries(): PartitionFieldSummary[] {
    return this.#codecs.map((codec, i) => {
      const stats = this.#stats[i] as FieldStats
      return {
        containsNull: stats.containsNull,
        containsNan: stats.containsNan,
        lowerBound: stats.min === null ? null : this.#serializeBound(codec.resultType, stats.min),
        upperBound: stats.max === null ? null : this.#serializeBound(codec.resultType, stats.max),
      }
    })
  }
}

// Parquet split-block bloom filters for chosen columns, one per column chunk, as Iceberg's
// `write.parquet.bloom-filter-enabled.column.*` asks for. hyparquet-writer builds them only for
// types whose JS value it can hash unambiguously and silently skips uuid, date, time, timestamp
// and decimal columns, the usual lookup keys. So the filters are built here with its
// BloomBuilder, over each value's *physical* Parquet value (what Iceberg's and other readers hash
// when they probe), and attached to the column chunk before the footer is written.
import type { ParquetWriter, SchemaElement } from 'hyparquet-writer'
import { BloomBuilder } from 'hyparquet-writer/src/bloom.js'
import { unconvertDecimal } from 'hyparquet-writer/src/unconvert.js'
import { FloeError } from '../errors.ts'
import type { IcebergValue, StructValue } from '../iceberg/index.ts'
import type { BloomFilterLocation } from './metrics.ts'
import type { LeafColumn } from './schema.ts'

export interface BloomFilterColumn {
  fieldId: number
  /** False-positive probability; Iceberg's default is 0.01. */
  fpp?: number
  /** Cap per column chunk; Iceberg's default is 1 MiB. */
  maxBytes?: number
}

type PendingIndex = ParquetWriter['pendingIndexes'][number]

interface PlannedFilter {
  leafIndex: number
  leaf: LeafColumn
  hashElement: SchemaElement
  toPhysical: (value: IcebergValue) => unknown
  options: { fpp?: number; maxBytes?: number }
}

interface WrittenFilter {
  fieldId: number
  rowGroup: number
  pending: PendingIndex
}

export class BloomFilterPlan {
  readonly #filters: PlannedFilter[]
  readonly #written: WrittenFilter[] = []

  constructor(leaves: readonly LeafColumn[], columns: readonly BloomFilterColumn[]) {
    this.#filters = columns.map((column) => {
      const leafIndex = leaves.findIndex((leaf) => leaf.fieldId === column.fieldId)
      const leaf = leaves[leafIndex]
      if (!leaf?.reachableThroughStructs) {
        throw new FloeError(
          'CONFIG_INVALID',
          `bloom filter asked for field ${column.fieldId}, which is not a primitive column outside lists and maps`,
          { details: { fieldId: column.fieldId } },
        )
      }
      const { type, type_length } = leaf.element
      const hashElement: SchemaElement = { name: leaf.element.name, type, type_length }
      const options: { fpp?: number; maxBytes?: number } = {}
      if (column.fpp !== undefined) options.fpp = column.fpp
      if (column.maxBytes !== undefined) options.maxBytes = column.maxBytes
      return { leafIndex, leaf, hashElement, toPhysical: physicalConverter(leaf), options }
    })
  }

  /** Bytes of the filters built so far, held until the footer is written. */
  get heldBytes(): number {
    let bytes = 0
    for (const { pending } of this.#written) bytes += pending.bloomFilter?.byteLength ?? 0
    return bytes
  }

  get isEmpty(): boolean {
    return this.#filters.length === 0
  }

  /**
   * Builds the filters of one row group from its buffered top-level columns and attaches them to
   * the chunks hyparquet-writer just recorded (`pending`, one per leaf in schema order); it writes
   * them between the column data and the footer at finish(). Pure, so an encoder thread runs it.
   */
  build(topLevelValues: readonly IcebergValue[][], pending: readonly PendingIndex[]): void {
    for (const filter of this.#filters) {
      const entry = pending[filter.leafIndex]
      if (entry?.chunk.meta_data?.path_in_schema.join('.') !== filter.leaf.path.join('.')) {
        throw new FloeError('INVARIANT_BROKEN', 'column chunks are not in schema leaf order')
      }
      const builder = new BloomBuilder(filter.hashElement, filter.options)
      const values = topLevelValues[filter.leaf.topLevelIndex] ?? []
      const structPath = filter.leaf.structPath
      for (let row = 0; row < values.length; row++) {
        let value = values[row] ?? null
        for (let depth = 0; depth < structPath.length && value !== null; depth++) {
          value = (value as StructValue)[structPath[depth] as string] ?? null
        }
        if (value !== null) builder.insert(filter.toPhysical(value))
      }
      const blocks = builder.finalize()
      if (blocks) entry.bloomFilter = blocks
    }
  }

  /** Remembers the filters build() attached to row group `rowGroup` of this file, for locations(). */
  record(rowGroup: number, pending: readonly PendingIndex[]): void {
    for (const filter of this.#filters) {
      const entry = pending[filter.leafIndex]
      if (entry?.bloomFilter) this.#written.push({ fieldId: filter.leaf.fieldId, rowGroup, pending: entry })
    }
  }

  /** Valid after the footer is written, which is when hyparquet-writer places the filters. */
  locations(): BloomFilterLocation[] {
    return this.#written.flatMap(({ fieldId, rowGroup, pending }) => {
      const { bloom_filter_offset, bloom_filter_length } = pending.chunk.meta_data ?? {}
      if (bloom_filter_offset === undefined || bloom_filter_length === undefined) return []
      return [{ fieldId, rowGroup, offset: bloom_filter_offset, length: bloom_filter_length }]
    })
  }
}

/** The value as its Parquet physical type's JS form, which BloomBuilder hashes as PLAIN bytes. */
function physicalConverter(leaf: LeafColumn): (value: IcebergValue) => unknown {
  if (leaf.element.converted_type === 'DECIMAL') {
    const element = leaf.element
    return (value) => unconvertDecimal(element, value as bigint)
  }
  return (value) => value
}

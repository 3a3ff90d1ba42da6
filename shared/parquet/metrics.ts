// Iceberg column metrics of one data file, gathered from the column-chunk statistics that
// hyparquet-writer computes anyway for the footer: each row group adds its chunks as it is
// written, so nothing is re-read and the cost is a few additions per column per row group.
// The rules follow Iceberg's Java ParquetUtil.footerMetrics: column sizes always; value, null
// and NaN counts unless the mode is `none`; bounds only in `truncate(N)`/`full` mode and only for
// leaves reached through structs alone (never list elements or map keys/values); a column whose
// statistics are missing in any row group gets no null count and no bounds.
import type { ParquetWriter } from 'hyparquet-writer'
import type { ChunkStatistics } from 'hyparquet-writer/src/types.js'
import { FloeError } from '../errors.ts'
import type { IcebergValue } from '../iceberg/index.ts'
import { compareValues, truncateMax, truncateMin } from './bounds.ts'
import type { LeafColumn } from './schema.ts'

/** Iceberg's metrics modes (`write.metadata.metrics.default` / `.column.<name>`). */
export type MetricsMode = 'none' | 'counts' | 'full' | `truncate(${number})`

export interface MetricsConfig {
  /** Iceberg's default is `truncate(16)`. */
  default?: MetricsMode
  /** By leaf field id. */
  columns?: ReadonlyMap<number, MetricsMode>
}

/** Where one bloom filter sits in the file, for the upload's sidecar and WRITE-STATUS. */
export interface BloomFilterLocation {
  fieldId: number
  rowGroup: number
  offset: bigint
  length: number
}

/**
 * Everything a manifest's `data_file` needs from the file itself, named as in `DataFile`; bounds
 * are still in-memory values, keyed by field id, for the manifest layer to serialize.
 */
export interface DataFileMetrics {
  recordCount: bigint
  fileSizeInBytes: bigint
  columnSizes: Map<number, bigint>
  valueCounts: Map<number, bigint>
  nullValueCounts: Map<number, bigint>
  nanValueCounts: Map<number, bigint>
  lowerBounds: Map<number, IcebergValue>
  upperBounds: Map<number, IcebergValue>
  /** Row-group start offsets, ascending. */
  splitOffsets: bigint[]
  bloomFilters: BloomFilterLocation[]
}

type ResolvedMode = { kind: 'none' } | { kind: 'counts' } | { kind: 'bounds'; truncateTo: number | undefined }

interface LeafAccumulator {
  leaf: LeafColumn
  mode: ResolvedMode
  columnSize: bigint
  valueCount: bigint
  nullCount: bigint
  nanCount: bigint
  statisticsMissing: boolean
  lower: IcebergValue | undefined
  upper: IcebergValue | undefined
}

export class MetricsCollector {
  readonly #leaves: LeafAccumulator[]
  readonly #splitOffsets: bigint[] = []

  constructor(leaves: readonly LeafColumn[], config: MetricsConfig = {}) {
    const known = new Set(leaves.map((leaf) => leaf.fieldId))
    for (const fieldId of config.columns?.keys() ?? []) {
      if (!known.has(fieldId)) {
        throw new FloeError('CONFIG_INVALID', `metrics mode given for field ${fieldId}, which is not a leaf column`, {
          details: { fieldId },
        })
      }
    }
    const defaultMode = parseMetricsMode(config.default ?? 'truncate(16)')
    this.#leaves = leaves.map((leaf) => {
      const configured = config.columns?.get(leaf.fieldId)
      return {
        leaf,
        mode: effectiveMode(leaf, configured === undefined ? defaultMode : parseMetricsMode(configured)),
        columnSize: 0n,
        valueCount: 0n,
        nullCount: 0n,
        nanCount: 0n,
        statisticsMissing: false,
        lower: undefined,
        upper: undefined,
      }
    })
  }

  addRowGroup(rowGroup: ParquetWriter['row_groups'][number], startOffset: number): void {
    if (rowGroup.columns.length !== this.#leaves.length) {
      throw new FloeError(
        'INVARIANT_BROKEN',
        'row group has a different number of columns than the schema has leaves',
        {
          details: { columns: rowGroup.columns.length, leaves: this.#leaves.length },
        },
      )
    }
    this.#splitOffsets.push(BigInt(startOffset))
    for (let i = 0; i < this.#leaves.length; i++) {
      const accumulator = this.#leaves[i] as LeafAccumulator
      const metadata = rowGroup.columns[i]?.meta_data
      if (!metadata) throw new FloeError('INVARIANT_BROKEN', 'column chunk without metadata')
      accumulator.columnSize += metadata.total_compressed_size
      accumulator.valueCount += metadata.num_values
      const statistics = metadata.statistics as ChunkStatistics | undefined
      if (!statistics || statistics.null_count === undefined) {
        accumulator.statisticsMissing = true
        continue
      }
      accumulator.nullCount += statistics.null_count
      accumulator.nanCount += statistics.nan_count ?? 0n
      if (accumulator.mode.kind === 'bounds') {
        mergeBounds(accumulator, statistics.min_value, statistics.max_value)
      }
    }
  }

  finish(recordCount: bigint, fileSizeInBytes: bigint, bloomFilters: BloomFilterLocation[]): DataFileMetrics {
    const metrics: DataFileMetrics = {
      recordCount,
      fileSizeInBytes,
      columnSizes: new Map(),
      valueCounts: new Map(),
      nullValueCounts: new Map(),
      nanValueCounts: new Map(),
      lowerBounds: new Map(),
      upperBounds: new Map(),
      splitOffsets: [...this.#splitOffsets],
      bloomFilters,
    }
    // a file without row groups has no column chunks to describe
    if (this.#splitOffsets.length === 0) return metrics
    for (const accumulator of this.#leaves) {
      const { leaf, mode } = accumulator
      metrics.columnSizes.set(leaf.fieldId, accumulator.columnSize)
      if (mode.kind === 'none') continue
      metrics.valueCounts.set(leaf.fieldId, accumulator.valueCount)
      if (accumulator.statisticsMissing) continue
      metrics.nullValueCounts.set(leaf.fieldId, accumulator.nullCount)
      if (leaf.isFloatingPoint) metrics.nanValueCounts.set(leaf.fieldId, accumulator.nanCount)
      if (mode.kind !== 'bounds') continue
      const lower = truncateLower(accumulator.lower, mode.truncateTo)
      const upper = truncateUpper(accumulator.upper, mode.truncateTo)
      if (lower !== undefined) metrics.lowerBounds.set(leaf.fieldId, lower)
      if (upper !== undefined) metrics.upperBounds.set(leaf.fieldId, upper)
    }
    return metrics
  }
}

export function parseMetricsMode(mode: string): ResolvedMode {
  const normalized = mode.trim().toLowerCase()
  if (normalized === 'none') return { kind: 'none' }
  if (normalized === 'counts') return { kind: 'counts' }
  if (normalized === 'full') return { kind: 'bounds', truncateTo: undefined }
  const truncate = /^truncate\((\d+)\)$/.exec(normalized)
  const length = truncate ? Number(truncate[1]) : 0
  if (length < 1) throw new FloeError('CONFIG_INVALID', `unknown metrics mode ${mode}`, { details: { mode } })
  return { kind: 'bounds', truncateTo: length }
}

function effectiveMode(leaf: LeafColumn, mode: ResolvedMode): ResolvedMode {
  if (mode.kind !== 'bounds') return mode
  if (!leaf.reachableThroughStructs) return { kind: 'counts' }
  // only strings, binary and fixed are truncated; other types keep full bounds
  if (mode.truncateTo !== undefined && leaf.order !== 'string' && (leaf.order !== 'bytes' || leaf.type === 'uuid')) {
    return { kind: 'bounds', truncateTo: undefined }
  }
  return mode
}

function mergeBounds(accumulator: LeafAccumulator, min: unknown, max: unknown): void {
  const order = accumulator.leaf.order
  const lower = boundValue(accumulator.leaf, min)
  if (lower !== undefined && (accumulator.lower === undefined || compareValues(order, lower, accumulator.lower) < 0)) {
    accumulator.lower = copied(lower)
  }
  const upper = boundValue(accumulator.leaf, max)
  if (upper !== undefined && (accumulator.upper === undefined || compareValues(order, upper, accumulator.upper) > 0)) {
    accumulator.upper = copied(upper)
  }
}

/** hyparquet-writer reports the JS values it was given; turn them into the value Iceberg stores. */
function boundValue(leaf: LeafColumn, value: unknown): IcebergValue | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number') {
    if (leaf.type === 'float') return Math.fround(value)
    // hyparquet normalizes a zero minimum to -0 (a floating-point rule); an int has no -0
    return leaf.isFloatingPoint ? value : value + 0
  }
  if (typeof value === 'bigint' || typeof value === 'string' || typeof value === 'boolean') return value
  if (value instanceof Uint8Array) return value
  throw new FloeError('INVARIANT_BROKEN', `unexpected statistics value for field ${leaf.fieldId}`)
}

/** A bound that is a view into a caller's buffer would pin that buffer for the file's lifetime. */
function copied(value: IcebergValue): IcebergValue {
  return value instanceof Uint8Array ? value.slice() : value
}

function truncateLower(value: IcebergValue | undefined, length: number | undefined): IcebergValue | undefined {
  if (value === undefined || length === undefined) return value
  if (typeof value === 'string' || value instanceof Uint8Array) return truncateMin(value, length)
  return value
}

function truncateUpper(value: IcebergValue | undefined, length: number | undefined): IcebergValue | undefined {
  if (value === undefined || length === undefined) return value
  if (typeof value === 'string' || value instanceof Uint8Array) return truncateMax(value, length)
  return value
}

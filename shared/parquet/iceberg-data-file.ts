// A closed Parquet file's metrics as the `data_file` a manifest entry records: bounds go from
// in-memory values to the spec's single-value binary serialization, by each field's type.
import type { DataFile, IcebergType, IcebergValue, PrimitiveType, Schema, StructValue } from '../iceberg/index.ts'
import { toBinarySingleValue } from '../iceberg/values/index.ts'
import type { DataFileMetrics } from './metrics.ts'

/** Field id -> primitive type, for every primitive field of the schema, nested ones included. */
export function primitiveFieldTypes(schema: Schema): Map<number, PrimitiveType> {
  const types = new Map<number, PrimitiveType>()
  const visit = (id: number, type: IcebergType): void => {
    if (typeof type === 'string') {
      types.set(id, type)
      return
    }
    switch (type.type) {
      case 'struct':
        for (const field of type.fields) visit(field.id, field.type)
        return
      case 'list':
        visit(type['element-id'], type.element)
        return
      case 'map':
        visit(type['key-id'], type.key)
        visit(type['value-id'], type.value)
        return
    }
  }
  for (const field of schema.fields) visit(field.id, field.type)
  return types
}

function serializeBounds(
  bounds: ReadonlyMap<number, IcebergValue>,
  types: ReadonlyMap<number, PrimitiveType>,
): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>()
  for (const [fieldId, value] of bounds) {
    const type = types.get(fieldId)
    if (type !== undefined && value !== null) out.set(fieldId, toBinarySingleValue(type, value))
  }
  return out
}

export function toDataFile(
  metrics: DataFileMetrics,
  file: { filePath: string; schema: Schema; specId: number; partition: StructValue; fileSizeInBytes?: bigint },
  types: ReadonlyMap<number, PrimitiveType> = primitiveFieldTypes(file.schema),
): DataFile {
  return {
    filePath: file.filePath,
    fileFormat: 'PARQUET',
    specId: file.specId,
    partition: file.partition,
    recordCount: metrics.recordCount,
    fileSizeInBytes: file.fileSizeInBytes ?? metrics.fileSizeInBytes,
    columnSizes: metrics.columnSizes,
    valueCounts: metrics.valueCounts,
    nullValueCounts: metrics.nullValueCounts,
    nanValueCounts: metrics.nanValueCounts,
    lowerBounds: serializeBounds(metrics.lowerBounds, types),
    upperBounds: serializeBounds(metrics.upperBounds, types),
    splitOffsets: metrics.splitOffsets,
  }
}

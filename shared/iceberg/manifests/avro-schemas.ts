// The Avro schemas of a v2 manifest (`manifest_entry`) and manifest list (`manifest_file`), with
// the field ids the spec fixes. Field order, record names (r2, r102, r508, k117_v118) and the
// optional fields written follow Java's V2Metadata, so Floe's files look like Iceberg's own.
import type { PartitionSpec, Schema } from '../types.ts'
import { type PartitionFieldCodec, partitionCodecs } from './partition-fields.ts'

type AvroField = Record<string, unknown>

function required(name: string, id: number, type: unknown): AvroField {
  return { name, type, 'field-id': id }
}

function optional(name: string, id: number, type: unknown): AvroField {
  return { name, type: ['null', type], default: null, 'field-id': id }
}

/** Spec Appendix A: a map with non-string keys is an array of key/value records, logical type map. */
function intKeyedMap(keyId: number, valueId: number, value: string): unknown {
  return {
    type: 'array',
    logicalType: 'map',
    items: {
      type: 'record',
      name: `k${keyId}_v${valueId}`,
      fields: [
        { name: 'key', type: 'int', 'field-id': keyId },
        { name: 'value', type: value, 'field-id': valueId },
      ],
    },
  }
}

function list(elementId: number, items: unknown): unknown {
  return { type: 'array', items, 'element-id': elementId }
}

export interface ManifestEntrySchema {
  avro: Record<string, unknown>
  partition: PartitionFieldCodec[]
}

export function manifestEntrySchema(schema: Schema, spec: PartitionSpec): ManifestEntrySchema {
  const partition = partitionCodecs(schema, spec, new Set())
  const dataFile = {
    type: 'record',
    name: 'r2',
    fields: [
      required('content', 134, 'int'),
      required('file_path', 100, 'string'),
      required('file_format', 101, 'string'),
      required('partition', 102, { type: 'record', name: 'r102', fields: partition.map((p) => p.avroField) }),
      required('record_count', 103, 'long'),
      required('file_size_in_bytes', 104, 'long'),
      optional('column_sizes', 108, intKeyedMap(117, 118, 'long')),
      optional('value_counts', 109, intKeyedMap(119, 120, 'long')),
      optional('null_value_counts', 110, intKeyedMap(121, 122, 'long')),
      optional('nan_value_counts', 137, intKeyedMap(138, 139, 'long')),
      optional('lower_bounds', 125, intKeyedMap(126, 127, 'bytes')),
      optional('upper_bounds', 128, intKeyedMap(129, 130, 'bytes')),
      optional('key_metadata', 131, 'bytes'),
      optional('split_offsets', 132, list(133, 'long')),
      optional('equality_ids', 135, list(136, 'int')),
      optional('sort_order_id', 140, 'int'),
      optional('referenced_data_file', 143, 'string'),
    ],
  }
  const avro = {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      required('status', 0, 'int'),
      optional('snapshot_id', 1, 'long'),
      optional('sequence_number', 3, 'long'),
      optional('file_sequence_number', 4, 'long'),
      required('data_file', 2, dataFile),
    ],
  }
  return { avro, partition }
}

export const manifestFileSchema: Record<string, unknown> = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    required('manifest_path', 500, 'string'),
    required('manifest_length', 501, 'long'),
    required('partition_spec_id', 502, 'int'),
    required('content', 517, 'int'),
    required('sequence_number', 515, 'long'),
    required('min_sequence_number', 516, 'long'),
    required('added_snapshot_id', 503, 'long'),
    required('added_files_count', 504, 'int'),
    required('existing_files_count', 505, 'int'),
    required('deleted_files_count', 506, 'int'),
    required('added_rows_count', 512, 'long'),
    required('existing_rows_count', 513, 'long'),
    required('deleted_rows_count', 514, 'long'),
    optional(
      'partitions',
      507,
      list(508, {
        type: 'record',
        name: 'r508',
        fields: [
          required('contains_null', 509, 'boolean'),
          optional('contains_nan', 518, 'boolean'),
          optional('lower_bound', 510, 'bytes'),
          optional('upper_bound', 511, 'bytes'),
        ],
      }),
    ),
    optional('key_metadata', 519, 'bytes'),
  ],
}

/** Avro field name by Iceberg field id, for one record of a writer's schema (read by id, not name). */
export function fieldNamesById(record: unknown): Map<number, { name: string; type: unknown }> {
  const byId = new Map<number, { name: string; type: unknown }>()
  const fields = typeof record === 'object' && record !== null ? (record as { fields?: unknown }).fields : undefined
  if (Array.isArray(fields)) {
    for (const field of fields as AvroField[]) {
      const id = field['field-id']
      if (typeof id === 'number' && typeof field.name === 'string') byId.set(id, { name: field.name, type: field.type })
    }
  }
  return byId
}

"""Reads a Parquet file with pyarrow (and, given an Iceberg schema, derives Iceberg metrics from its
footer with pyiceberg) and prints what the tests compare, as JSON on stdout.

Usage: read_parquet.py FILE [ICEBERG_SCHEMA_JSON_FILE]

Values are printed in a canonical form both sides can produce: integers of every width (and
dates, times, timestamps as days / microseconds, decimals as unscaled integers) as decimal
strings, bytes as hex, maps as [key, value] pairs, non-finite floats as strings.
"""

import datetime
import decimal
import json
import math
import sys
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

EPOCH = datetime.datetime(1970, 1, 1)
EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MICRO = datetime.timedelta(microseconds=1)


def canon_float(value):
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def unscaled(value: decimal.Decimal, scale: int) -> str:
    sign, digits, exponent = value.as_tuple()
    number = int("".join(map(str, digits)) or "0") * 10 ** (exponent + scale)
    return str(-number if sign else number)


def canon(value, arrow_type):
    if value is None:
        return None
    if isinstance(arrow_type, pa.ExtensionType):
        if isinstance(value, uuid.UUID):
            return value.bytes.hex()
        arrow_type = arrow_type.storage_type
    if pa.types.is_struct(arrow_type):
        return {f.name: canon(value[f.name], f.type) for f in arrow_type}
    if pa.types.is_map(arrow_type):
        return [[canon(k, arrow_type.key_type), canon(v, arrow_type.item_type)] for k, v in value]
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [canon(item, arrow_type.value_type) for item in value]
    if pa.types.is_boolean(arrow_type):
        return value
    if pa.types.is_integer(arrow_type):
        return str(value)
    if pa.types.is_floating(arrow_type):
        return canon_float(value)
    if pa.types.is_decimal(arrow_type):
        return unscaled(value, arrow_type.scale)
    if pa.types.is_date32(arrow_type):
        return str((value - datetime.date(1970, 1, 1)).days)
    if pa.types.is_time64(arrow_type):
        return str(((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond)
    if pa.types.is_timestamp(arrow_type):
        return str((value - (EPOCH_UTC if arrow_type.tz else EPOCH)) // MICRO)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return value
    if isinstance(value, uuid.UUID):
        return value.bytes.hex()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    raise TypeError(f"no canonical form for {arrow_type}: {value!r}")


def field_tree(field):
    metadata = field.metadata or {}
    node = {
        "name": field.name,
        "fieldId": int(metadata[b"PARQUET:field_id"]) if b"PARQUET:field_id" in metadata else None,
        "nullable": field.nullable,
        "arrowType": str(field.type),
    }
    arrow_type = field.type
    if pa.types.is_struct(arrow_type):
        node["children"] = [field_tree(child) for child in arrow_type]
    elif pa.types.is_map(arrow_type):
        node["key"] = field_tree(arrow_type.key_field)
        node["value"] = field_tree(arrow_type.item_field)
    elif pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        node["element"] = field_tree(arrow_type.value_field)
    return node


def canon_statistic(raw, column):
    if raw is None:
        return None
    physical = column.physical_type
    logical = column.logical_type.type
    if physical in ("INT32", "INT64"):
        return str(raw)
    if physical in ("FLOAT", "DOUBLE"):
        return canon_float(raw)
    if physical == "BOOLEAN":
        return raw
    data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    if logical == "DECIMAL":
        return str(int.from_bytes(data, "big", signed=True))
    if logical == "STRING":
        return data.decode("utf-8")
    return data.hex()


def iceberg_metrics(parquet_file, schema_path):
    """Iceberg metrics as pyiceberg derives them from the footer (its own add_files/write path)."""
    from pyiceberg.conversions import from_bytes
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.schema import Schema
    from pyiceberg.types import DecimalType

    with open(schema_path) as handle:
        schema = Schema.model_validate_json(handle.read())
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=parquet_file.metadata,
        stats_columns=compute_statistics_plan(schema, {}),
        parquet_column_mapping=parquet_path_to_id_mapping(schema),
    ).to_serialized_dict()

    def bound(field_id, data):
        field_type = schema.find_field(field_id).field_type
        value = from_bytes(field_type, data)
        if isinstance(field_type, DecimalType):
            return unscaled(value, field_type.scale)
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            return canon_float(value)
        if isinstance(value, uuid.UUID):
            return value.bytes.hex()
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).hex()
        return value

    def counts(mapping):
        return {str(k): str(v) for k, v in mapping.items()}

    return {
        "recordCount": str(statistics["record_count"]),
        "columnSizes": counts(statistics["column_sizes"]),
        "valueCounts": counts(statistics["value_counts"]),
        "nullValueCounts": counts(statistics["null_value_counts"]),
        "lowerBounds": {str(k): bound(k, v) for k, v in statistics["lower_bounds"].items()},
        "upperBounds": {str(k): bound(k, v) for k, v in statistics["upper_bounds"].items()},
        "splitOffsets": [str(offset) for offset in statistics["split_offsets"]],
    }


def main():
    path = sys.argv[1]
    parquet_file = pq.ParquetFile(path)
    metadata = parquet_file.metadata
    table = parquet_file.read()
    parquet_schema = parquet_file.schema
    columns = [parquet_schema.column(i) for i in range(len(parquet_schema))]
    result = {
        "numRows": metadata.num_rows,
        "numRowGroups": metadata.num_row_groups,
        "createdBy": metadata.created_by,
        "keyValueMetadata": {k.decode(): v.decode() for k, v in (metadata.metadata or {}).items()},
        "fields": [field_tree(field) for field in parquet_file.schema_arrow],
        "leaves": [
            {
                "path": column.path,
                "physicalType": column.physical_type,
                "logicalType": json.loads(column.logical_type.to_json()),
                "convertedType": column.converted_type,
                "length": column.length,
                "precision": column.precision,
                "scale": column.scale,
            }
            for column in columns
        ],
        "rowGroups": [],
        "rows": [
            {name: canon(row[name], table.schema.field(name).type) for name in table.column_names}
            for row in table.to_pylist()
        ],
    }
    for index in range(metadata.num_row_groups):
        row_group = metadata.row_group(index)
        chunks = []
        for position in range(row_group.num_columns):
            chunk = row_group.column(position)
            statistics = chunk.statistics if chunk.is_stats_set else None
            chunks.append(
                {
                    "path": chunk.path_in_schema,
                    "codec": chunk.compression,
                    "encodings": list(chunk.encodings),
                    "numValues": chunk.num_values,
                    "totalCompressedSize": chunk.total_compressed_size,
                    "fileOffset": chunk.file_offset,
                    "dataPageOffset": chunk.data_page_offset,
                    "dictionaryPageOffset": chunk.dictionary_page_offset,
                    "bloomFilterOffset": chunk.bloom_filter_offset,
                    "bloomFilterLength": chunk.bloom_filter_length,
                    "statistics": None
                    if statistics is None
                    else {
                        "hasMinMax": statistics.has_min_max,
                        "min": canon_statistic(statistics.min_raw, columns[position]) if statistics.has_min_max else None,
                        "max": canon_statistic(statistics.max_raw, columns[position]) if statistics.has_min_max else None,
                        "nullCount": statistics.null_count if statistics.has_null_count else None,
                    },
                }
            )
        result["rowGroups"].append({"numRows": row_group.num_rows, "columns": chunks})
    if len(sys.argv) > 2:
        result["iceberg"] = iceberg_metrics(parquet_file, sys.argv[2])
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()

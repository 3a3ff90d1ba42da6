"""Reads WAL segments with pyarrow, an implementation independent of Floe's writer, and prints
what the WAL tests compare, as JSON on stdout.

Usage: read_segments.py COLUMN FILE...

For each file: its row count, row-group count, each top-level field's Parquet field id, the
footer's floe.* key-value metadata, and the values of COLUMN as strings (so 64-bit integers and
timestamps survive JSON).
"""

import json
import sys

import pyarrow.parquet as pq


def text(value):
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def describe(path, column):
    parquet = pq.ParquetFile(path)
    table = parquet.read()
    metadata = parquet.metadata.metadata or {}
    return {
        "path": path,
        "numRows": parquet.metadata.num_rows,
        "numRowGroups": parquet.metadata.num_row_groups,
        "fieldIds": {
            field.name: int(field.metadata[b"PARQUET:field_id"]) if field.metadata else None
            for field in table.schema
        },
        "floeMetadata": {
            key.decode(): value.decode() for key, value in metadata.items() if key.startswith(b"floe.")
        },
        "values": [text(value) for value in table.column(column).to_pylist()],
    }


if __name__ == "__main__":
    column, files = sys.argv[1], sys.argv[2:]
    print(json.dumps([describe(path, column) for path in files]))

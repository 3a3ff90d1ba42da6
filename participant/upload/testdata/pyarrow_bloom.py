"""Writes a Parquet file with Arrow C++'s own split-block bloom filters (pyarrow), an implementation
independent of Floe's writer and of hyparquet, and prints where each filter sits as JSON.

Usage: pyarrow_bloom.py OUT_FILE ROWS ROWS_PER_GROUP FPP

Columns: name (string, field id 1) = "user-<i>", user_id (long, field id 2) = i * 7919 - 5.
Output: [{"fieldId", "rowGroup", "offset", "length"}] for every filter in the footer.
"""

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

path, rows, per_group, fpp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
schema = pa.schema(
    [
        pa.field("name", pa.string(), metadata={b"PARQUET:field_id": b"1"}),
        pa.field("user_id", pa.int64(), metadata={b"PARQUET:field_id": b"2"}),
    ]
)
table = pa.table(
    {"name": [f"user-{i}" for i in range(rows)], "user_id": [i * 7919 - 5 for i in range(rows)]},
    schema=schema,
)
options = {"ndv": per_group, "fpp": fpp}
pq.write_table(
    table,
    path,
    row_group_size=per_group,
    bloom_filter_options={"name": options, "user_id": options},
)

field_ids = {"name": 1, "user_id": 2}
metadata = pq.ParquetFile(path).metadata
filters = []
for group in range(metadata.num_row_groups):
    for column in range(metadata.num_columns):
        chunk = metadata.row_group(group).column(column)
        if chunk.bloom_filter_offset is None:
            continue
        filters.append(
            {
                "fieldId": field_ids[chunk.path_in_schema],
                "rowGroup": group,
                "offset": chunk.bloom_filter_offset,
                "length": chunk.bloom_filter_length,
            }
        )
json.dump(filters, sys.stdout)

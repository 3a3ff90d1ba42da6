"""Reads a manifest list and its manifests with pyiceberg's own reader and prints them as JSON.

An independent check of Floe's manifest writer (manifest-interop.test.ts runs it): pyiceberg
resolves every column by the field ids in the Avro header, inherits sequence numbers and snapshot
ids as the spec says, and its header parser turns the Avro schema back into an Iceberg schema.

Usage: read_with_pyiceberg.py <manifest-list path or URI>
Integers are printed as strings and bytes as hex, so 64-bit values survive JSON exactly.
"""

import decimal
import enum
import json
import sys
import uuid

from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import read_manifest_list
from pyiceberg.schema import index_by_id
from pyiceberg.typedef import Record


def plain(value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"hex": bytes(value).hex()}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    if isinstance(value, Record):
        return [plain(v) for v in value]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): plain(v) for k, v in value.items()}
    raise TypeError(f"cannot print {type(value)}")


def header(io, location):
    with AvroFile(io.new_input(location)) as avro:
        schema = avro.schema
        return {"meta": dict(avro.header.meta), "field_ids": sorted(index_by_id(schema).keys())}


def main(location):
    io = PyArrowFileIO()
    out = {"list_header": header(io, location), "manifests": []}
    for manifest in read_manifest_list(io.new_input(location)):
        entries = []
        for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
            f = entry.data_file
            entries.append(
                {
                    "status": plain(entry.status),
                    "snapshot_id": plain(entry.snapshot_id),
                    "sequence_number": plain(entry.sequence_number),
                    "file_sequence_number": plain(entry.file_sequence_number),
                    "content": plain(f.content),
                    "file_path": f.file_path,
                    "file_format": plain(f.file_format),
                    "spec_id": plain(f.spec_id),
                    "partition": plain(f.partition),
                    "record_count": plain(f.record_count),
                    "file_size_in_bytes": plain(f.file_size_in_bytes),
                    "column_sizes": plain(f.column_sizes),
                    "value_counts": plain(f.value_counts),
                    "null_value_counts": plain(f.null_value_counts),
                    "nan_value_counts": plain(f.nan_value_counts),
                    "lower_bounds": plain(f.lower_bounds),
                    "upper_bounds": plain(f.upper_bounds),
                    "key_metadata": plain(f.key_metadata),
                    "split_offsets": plain(f.split_offsets),
                    "equality_ids": plain(f.equality_ids),
                    "sort_order_id": plain(f.sort_order_id),
                }
            )
        out["manifests"].append(
            {
                "manifest_path": manifest.manifest_path,
                "manifest_length": plain(manifest.manifest_length),
                "partition_spec_id": plain(manifest.partition_spec_id),
                "content": plain(manifest.content),
                "sequence_number": plain(manifest.sequence_number),
                "min_sequence_number": plain(manifest.min_sequence_number),
                "added_snapshot_id": plain(manifest.added_snapshot_id),
                "added_files_count": plain(manifest.added_files_count),
                "existing_files_count": plain(manifest.existing_files_count),
                "deleted_files_count": plain(manifest.deleted_files_count),
                "added_rows_count": plain(manifest.added_rows_count),
                "existing_rows_count": plain(manifest.existing_rows_count),
                "deleted_rows_count": plain(manifest.deleted_rows_count),
                "partitions": [
                    {
                        "contains_null": p.contains_null,
                        "contains_nan": p.contains_nan,
                        "lower_bound": plain(p.lower_bound),
                        "upper_bound": plain(p.upper_bound),
                    }
                    for p in (manifest.partitions or [])
                ],
                "key_metadata": plain(manifest.key_metadata),
                "header": header(io, manifest.manifest_path),
                "entries": entries,
            }
        )
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])

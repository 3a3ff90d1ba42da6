"""pyiceberg as the independent side of Floe's catalog and storage tests.

Usage: python pyiceberg_probe.py COMMAND JSON-ARGS, prints one JSON object.

  load    {"catalog": {...load_catalog properties, "name": ...}, "table": "ns.t"}
          -> what pyiceberg sees of the table (ids as strings: they are 63-bit)
  create  {"catalog": {...}, "table": "ns.t"}     -> pyiceberg creates ns and t (id long, s string)
  append  {"catalog": {...}, "table": "ns.t", "ids": [1, 2]}  -> pyiceberg appends rows, then load
  read    {"properties": {...FileIO properties}, "location": "abfs://..."} -> {"exists", "text"}
"""

import json
import sys

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.io import load_file_io


def open_catalog(spec):
    spec = dict(spec)
    name = spec.pop("name")
    return load_catalog(name, **spec)


def describe(table):
    metadata = table.metadata
    return {
        "metadata_location": table.metadata_location,
        "format_version": metadata.format_version,
        "table_uuid": str(metadata.table_uuid),
        "location": metadata.location,
        "schema": json.loads(table.schema().model_dump_json()),
        "spec": json.loads(table.spec().model_dump_json()),
        "current_snapshot_id": None if metadata.current_snapshot_id is None else str(metadata.current_snapshot_id),
        "snapshot_ids": [str(snapshot.snapshot_id) for snapshot in metadata.snapshots],
        "last_sequence_number": metadata.last_sequence_number,
        "properties": metadata.properties,
    }


def main():
    command, args = sys.argv[1], json.loads(sys.argv[2])
    if command == "load":
        result = describe(open_catalog(args["catalog"]).load_table(args["table"]))
    elif command == "create":
        catalog = open_catalog(args["catalog"])
        namespace = args["table"].rsplit(".", 1)[0]
        catalog.create_namespace_if_not_exists(namespace)
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])
        result = describe(catalog.create_table(args["table"], schema=schema))
    elif command == "append":
        table = open_catalog(args["catalog"]).load_table(args["table"])
        ids = args["ids"]
        rows = pa.table({"id": pa.array(ids, pa.int64()), "s": [str(i) for i in ids]}, schema=table.schema().as_arrow())
        table.append(rows)
        result = describe(table)
    elif command == "read":
        io = load_file_io(args["properties"], location=args["location"])
        stream = io.new_input(args["location"])
        exists = stream.exists()
        result = {"exists": exists, "text": stream.open().read().decode() if exists else None}
    else:
        raise SystemExit(f"unknown command {command}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()

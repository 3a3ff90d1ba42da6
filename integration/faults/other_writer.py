"""Another engine changing a table Floe writes, one step per call, through pyiceberg.

Steps: add-column (optional string `note`), evolve-spec (add identity(kind)), append (COUNT rows
with ids PREFIX0..), expire (every snapshot older than now but main's head), files (each data
file of main with its spec id and the ids it holds, read from the file itself). Floe commits
meanwhile, so each change is retried on a lost compare-and-set. Prints one JSON object.
"""
import argparse
import datetime
import json
import time

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.types import StringType

parser = argparse.ArgumentParser()
parser.add_argument("--uri", required=True)
parser.add_argument("table")
parser.add_argument("step", choices=["add-column", "evolve-spec", "append", "expire", "files"])
parser.add_argument("--prefix", default="pyiceberg-")
parser.add_argument("--count", type=int, default=100)
args = parser.parse_args()
catalog = load_catalog("rest", type="rest", uri=args.uri)


def retried(change):
    for attempt in range(30):
        table = catalog.load_table(args.table)
        try:
            return change(table)
        except CommitFailedException:
            time.sleep(0.2 * (attempt + 1))
    raise RuntimeError(f"{args.step}: lost the compare-and-set 30 times")


def add_column(table):
    with table.update_schema() as update:
        update.add_column("note", StringType(), doc="added by another engine")
    return {}


def evolve_spec(table):
    with table.update_spec() as update:
        update.add_identity("kind")
    return {}


def append(table):
    when = datetime.datetime(2026, 11, 29, 12, tzinfo=datetime.timezone.utc)
    rows = [
        {"id": f"{args.prefix}{i}", "ts": when, "user_id": i, "kind": "py", "amount": float(i), "note": "pyiceberg"}
        for i in range(args.count)
    ]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    return {}


def expire(table):
    before = len(table.metadata.snapshots)
    table.maintenance.expire_snapshots().older_than(datetime.datetime.now(datetime.timezone.utc)).commit()
    return {"expired": before - len(catalog.load_table(args.table).metadata.snapshots)}


def files(table):
    result = []
    for task in table.scan().plan_files():
        path = task.file.file_path
        ids = pq.read_table(path.removeprefix("file://"), columns=["id"]).column("id").to_pylist()
        result.append({"path": path, "specId": task.file.spec_id, "ids": ids})
    return {"files": result}


steps = {"add-column": add_column, "evolve-spec": evolve_spec, "append": append, "expire": expire, "files": files}
out = retried(steps[args.step]) if args.step != "files" else files(catalog.load_table(args.table))
table = catalog.load_table(args.table)
out.update(
    {
        "schemaId": table.metadata.current_schema_id,
        "specId": table.metadata.default_spec_id,
        "snapshots": len(table.metadata.snapshots),
    }
)
print(json.dumps(out))

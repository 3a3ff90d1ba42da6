"""Appends N rows with ids PREFIX0..PREFIX{N-1} to a table through pyiceberg (another writer)."""
import argparse
import datetime

import pyarrow as pa
from pyiceberg.catalog import load_catalog

parser = argparse.ArgumentParser()
parser.add_argument("--uri", required=True)
parser.add_argument("table")
parser.add_argument("prefix")
parser.add_argument("count", type=int)
args = parser.parse_args()
table = load_catalog("rest", type="rest", uri=args.uri).load_table(args.table)
when = datetime.datetime(2025, 11, 30, 12, tzinfo=datetime.timezone.utc)
rows = [{"id": f"{args.prefix}{i}", "ts": when, "kind": "py"} for i in range(args.count)]
table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))

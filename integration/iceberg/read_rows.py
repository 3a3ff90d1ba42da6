"""Prints every row of a table as JSON, read by pyiceberg, with values in plain text forms."""
import argparse
import datetime
import decimal
import json
import uuid

from pyiceberg.catalog import load_catalog


def plain(value):
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


parser = argparse.ArgumentParser()
parser.add_argument("--uri", required=True)
parser.add_argument("table")
args = parser.parse_args()
table = load_catalog("rest", type="rest", uri=args.uri).load_table(args.table)
print(json.dumps([plain(row) for row in table.scan().to_arrow().to_pylist()]))

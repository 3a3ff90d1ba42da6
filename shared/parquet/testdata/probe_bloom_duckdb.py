"""Probes a Parquet file's bloom filters with DuckDB, an independent reader of them (pyarrow has no
bloom filter API). DuckDB is not part of the project's stack: run this with a Python that has
`duckdb` installed, e.g. a throwaway venv (`python3 -m venv /tmp/duckdb && /tmp/duckdb/bin/pip
install duckdb`), and point FLOE_DUCKDB_PYTHON at it for the bloom filter test.

Usage: probe_bloom_duckdb.py FILE PROBES_JSON
PROBES_JSON: [{"column": "s", "literal": "'v3'"}, ...], each literal a DuckDB SQL expression.
Prints, per probe, the row groups whose filter excludes the value: [[row_group_id, excludes], ...].
"""

import json
import sys

import duckdb


def main():
    path, probes = sys.argv[1], json.loads(sys.argv[2])
    connection = duckdb.connect()
    results = []
    for probe in probes:
        rows = connection.execute(
            f"select row_group_id, bloom_filter_excludes from parquet_bloom_probe(?, ?, {probe['literal']}) order by 1",
            [path, probe["column"]],
        ).fetchall()
        results.append([[int(group), bool(excludes)] for group, excludes in rows])
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()

"""Floe's independent reader: load a table with pyiceberg and report what is in it.

pyiceberg is not Floe's code, so a table it reads whole (to_arrow() checks every Parquet field id
against the schema) is proof that Floe's files and metadata are valid Iceberg.

Usage (through the integration/verify wrapper, which picks the stack's venv):
  verify TABLE|NAMESPACE.PREFIX* [--catalog rest|sql|postgres] [--uri URI] [--sql-path FILE --sql-name NAME]
         [--sql-uri postgresql://USER@HOST:PORT/DB]
         [--ids-file FILE --id-column COL] [--filter EXPR] [--rows N] [--property KEY=VALUE ...]

Prints one JSON object: metadata location, row count (from reading every file, not from the
manifests), schema, snapshot summaries, and with --ids-file the ids missing and duplicated.
A name ending in `*` reads every table of the namespace whose name starts with the prefix (the
tables a route made) and counts their rows together; an ids file whose lines are `id<TAB>table`
also checks that each id is in its table.
Exit status: 0 when the check passed (or no check was asked), 1 when ids are missing or
duplicated, 2 on a usage or load error.
"""

import argparse
import base64
import collections
import json
import os
import sys


def endpoints():
    here = os.path.dirname(os.path.abspath(__file__))
    stack = os.environ.get("FLOE_STACK_DIR", os.path.join(here, "..", ".stack"))
    path = os.path.join(stack, "endpoints.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def load_catalog(args):
    from pyiceberg.catalog import load_catalog as pyiceberg_catalog

    known = endpoints()
    props = {}
    azurite = known.get("azurite")
    if azurite:
        # Lets pyiceberg (fsspec/adlfs) read abfs:// locations on the local Azurite.
        props["adls.connection-string"] = azurite["connectionString"]
        props["adls.account-name"] = azurite["account"]
    s3 = known.get("s3")
    if s3:
        # pyiceberg's own S3 FileIO (pyarrow's S3 filesystem) reads s3:// on the stack's server.
        props["s3.endpoint"] = s3["endpoint"]
        props["s3.access-key-id"] = s3["accessKeyId"]
        props["s3.secret-access-key"] = s3["secretAccessKey"]
        props["s3.region"] = s3["region"]
        props["s3.force-virtual-addressing"] = "false"
    for prop in args.property or []:
        key, _, value = prop.partition("=")
        props[key] = value
    if args.catalog == "rest":
        uri = args.uri or known.get("rest", {}).get("uri")
        if not uri:
            raise SystemExit("verify: no REST catalog uri (give --uri or bring the stack up)")
        return pyiceberg_catalog("rest", **{"type": "rest", "uri": uri, **props})
    name = args.sql_name or known.get("sql", {}).get("name", "floe")
    if args.catalog == "postgres" or args.sql_uri:
        # pyiceberg's own SqlCatalog on PostgreSQL (SQLAlchemy, psycopg2). The password stays out
        # of the uri and the command line: libpq reads PGPASSWORD (the stack's, unless given).
        server = known.get("postgres", {})
        uri = args.sql_uri or server.get("uri")
        if not uri:
            raise SystemExit("verify: no PostgreSQL catalog (give --sql-uri or bring the stack up with --postgres)")
        if "PGPASSWORD" not in os.environ and server.get("password"):
            os.environ["PGPASSWORD"] = server["password"]
        uri = uri.replace("postgresql://", "postgresql+psycopg2://", 1).replace("postgres://", "postgresql+psycopg2://", 1)
        return pyiceberg_catalog(name, **{"type": "sql", "uri": uri, "init_catalog_tables": "false", **props})
    path = args.sql_path or known.get("sql", {}).get("path")
    if not path:
        raise SystemExit("verify: no SQL catalog file (give --sql-path)")
    return pyiceberg_catalog(
        name, **{"type": "sql", "uri": f"sqlite:///{os.path.abspath(path)}", "init_catalog_tables": "false", **props}
    )


def read_ids(path):
    """The expected ids, and the tables each may be in when the lines say (`id<TAB>table[|table...]`:
    a record read under either of two routes belongs in either route's table, once)."""
    ids, tables = [], {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            id_, _, table = line.partition("\t")
            ids.append(id_)
            if table:
                tables[id_] = set(table.split("|"))
    return ids, tables


def routed_tables(catalog, pattern):
    """Every table of the namespace whose name starts with the pattern's prefix, by full name."""
    namespace, _, prefix = pattern[:-1].rpartition(".")
    names = sorted(".".join(ident) for ident in catalog.list_tables(namespace) if ident[-1].startswith(prefix))
    return {name: catalog.load_table(name) for name in names}


def read_routed(args):
    """The rows of every routed table: (arrow tables, table name of each row's id)."""
    import pyarrow as pa

    tables = routed_tables(load_catalog(args), args.table)
    arrows, where = [], collections.defaultdict(list)
    for name, table in tables.items():
        scan = table.scan(row_filter=args.filter) if args.filter else table.scan()
        arrow = scan.to_arrow()
        arrows.append(arrow)
        for value in arrow.column(args.id_column).to_pylist():
            where[str(value)].append(name)
    rows = pa.concat_tables(arrows) if arrows else None
    return tables, rows, where


def main():
    parser = argparse.ArgumentParser(prog="verify", description=__doc__.splitlines()[0])
    parser.add_argument("table", help="namespace.table")
    parser.add_argument("--catalog", choices=["rest", "sql", "postgres"], default="rest")
    parser.add_argument("--uri", help="REST catalog uri (default: the stack's)")
    parser.add_argument("--sql-path", help="SQLite file of the SQL catalog (default: the stack's)")
    parser.add_argument("--sql-name", help="catalog name in the SQL catalog (default: the stack's)")
    parser.add_argument("--sql-uri", help="PostgreSQL SQL catalog, postgresql://USER@HOST:PORT/DB (default: the stack's)")
    parser.add_argument("--ids-file", help="file with one expected id per line")
    parser.add_argument("--id-column", default="id", help="column holding the ids (default: id)")
    parser.add_argument("--filter", help="pyiceberg row filter, e.g. \"kind = 'click'\"")
    parser.add_argument("--rows", type=int, default=0, help="also print the first N rows")
    parser.add_argument(
        "--binary-base64",
        action="store_true",
        help="print binary values of the rows as base64 (default: Python's text of the bytes)",
    )
    parser.add_argument(
        "--property",
        action="append",
        metavar="KEY=VALUE",
        help="a catalog or FileIO property, e.g. s3.endpoint=http://127.0.0.1:9000 (repeatable; the stack's S3 ones are set already)",
    )
    args = parser.parse_args()

    if args.table.endswith("*"):
        return main_routed(args)
    try:
        table = load_catalog(args).load_table(args.table)
    except Exception as error:  # noqa: BLE001 - report any load failure as one line
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 2

    scan = table.scan(row_filter=args.filter) if args.filter else table.scan()
    arrow = scan.to_arrow()
    all_files = [task.file for task in table.scan().plan_files()]
    result = {
        "table": args.table,
        "metadataLocation": table.metadata_location,
        "rows": arrow.num_rows,
        "files": len(list(scan.plan_files())),
        "dataFiles": len(all_files),
        "filesWithBounds": sum(1 for f in all_files if f.lower_bounds and f.upper_bounds),
        "manifests": len(table.current_snapshot().manifests(table.io)) if table.current_snapshot() else 0,
        "schema": str(table.schema()),
        "spec": str(table.spec()),
        "snapshots": [
            {"id": str(s.snapshot_id), "summary": dict(s.summary.additional_properties) | {"operation": str(s.summary.operation.value)}}
            for s in table.snapshots()
        ],
        "properties": dict(table.properties),
    }
    if args.rows:
        result["sample"] = arrow.slice(0, args.rows).to_pylist()

    status = 0
    if args.ids_file:
        expected, _ = read_ids(args.ids_file)
        found = collections.Counter(str(v) for v in arrow.column(args.id_column).to_pylist())
        missing = [i for i in expected if found[i] == 0]
        duplicated = {i: n for i, n in found.items() if n > 1}
        expected_set = set(expected)
        unexpected = [i for i in found if i not in expected_set]
        result["ids"] = {
            "expected": len(expected),
            "found": sum(found.values()),
            "missing": len(missing),
            "duplicated": len(duplicated),
            "unexpected": len(unexpected),
            "missingSample": missing[:20],
            "duplicatedSample": dict(list(duplicated.items())[:20]),
        }
        status = 0 if not missing and not duplicated and not unexpected else 1
    def printable(value):
        if args.binary_base64 and isinstance(value, bytes):
            return base64.b64encode(value).decode("ascii")
        return str(value)

    print(json.dumps(result, default=printable))
    return status


def main_routed(args):
    try:
        tables, rows, where = read_routed(args)
    except Exception as error:  # noqa: BLE001 - report any load failure as one line
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 2
    result = {"table": args.table, "tables": len(tables), "rows": rows.num_rows if rows is not None else 0}
    status = 0
    if args.ids_file:
        expected, tables_of = read_ids(args.ids_file)
        expected_set = set(expected)
        missing = [i for i in expected if not where.get(i)]
        duplicated = {i: names for i, names in where.items() if len(names) > 1}
        unexpected = [i for i in where if i not in expected_set]
        misrouted = {i: names[0] for i, names in where.items() if i in tables_of and names[0] not in tables_of[i]}
        result["ids"] = {
            "expected": len(expected),
            "found": sum(len(names) for names in where.values()),
            "missing": len(missing),
            "duplicated": len(duplicated),
            "unexpected": len(unexpected),
            "misrouted": len(misrouted),
            "missingSample": missing[:20],
            "duplicatedSample": dict(list(duplicated.items())[:20]),
            "misroutedSample": dict(list(misrouted.items())[:20]),
        }
        status = 0 if not (missing or duplicated or unexpected or misrouted) else 1
    print(json.dumps(result, default=str))
    return status


if __name__ == "__main__":
    sys.exit(main())

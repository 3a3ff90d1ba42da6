"""Spark reads and writes a table Floe writes, through the stack's REST catalog (spark.test.ts).

One Spark session (local, one core) does, in order, printing one JSON line per step on stdout:
  read     every row back, each column compared with the expected rows (--expected, JSON lines of
           {"id": ..., "row": {...}} in the plain form `plain` makes of Spark's values)
  pruning  the files the scan plans under a filter on each partition column against the table's
  ready    then waits for a line on stdin: the test lets Floe commit a round first
  appended Spark's INSERT INTO of --spark-rows rows of every column type, ids --prefix0, 1, ...
The local file:// warehouse needs no storage credentials. Spark's own log goes to stderr.
"""

import argparse
import datetime
import decimal
import json
import os
import sys
import time

os.environ["TZ"] = "UTC"
time.tzset()

from pyspark.sql import Row, SparkSession  # noqa: E402 (after the time zone is set)

parser = argparse.ArgumentParser()
parser.add_argument("--uri", required=True)
parser.add_argument("--warehouse", required=True)
parser.add_argument("--jars", required=True, help="comma-separated: Iceberg's Spark runtime")
parser.add_argument("--expected", required=True)
parser.add_argument("--prefix", required=True)
parser.add_argument("--spark-rows", type=int, default=60)
parser.add_argument("--filter-kind", default="buy")
parser.add_argument("--filter-day", required=True, help="YYYY-MM-DD: ts on or after it")
parser.add_argument("table", help="namespace.table")
args = parser.parse_args()
table = f"floe.{args.table}"


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def plain(value):
    """Spark's Python values as plain JSON: exact decimal text, UTC timestamps to the microsecond."""
    if value is None:
        return None
    if isinstance(value, Row):
        return {k: plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return sorted([k, plain(v)] for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


spark = (
    SparkSession.builder.master("local[1]")
    .appName("floe-interop")
    .config("spark.jars", args.jars)
    .config("spark.driver.memory", "768m")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1")
    # The plan collect() runs is the one whose scan metrics `scanned_files` reads.
    .config("spark.sql.adaptive.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.local.dir", os.environ.get("TMPDIR", "/tmp"))
    .config("spark.sql.warehouse.dir", os.path.join(os.environ.get("TMPDIR", "/tmp"), "spark-warehouse"))
    .config("spark.sql.catalog.floe", "org.apache.iceberg.spark.SparkCatalog")
    .config("spark.sql.catalog.floe.type", "rest")
    .config("spark.sql.catalog.floe.uri", args.uri)
    .config("spark.sql.catalog.floe.warehouse", args.warehouse)
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")

# --- read: every row, every column -----------------------------------------------------------
expected = {}
with open(args.expected, encoding="utf-8") as f:
    for line in f:
        if line.strip():
            entry = json.loads(line)
            expected[entry["id"]] = entry["row"]

frame = spark.table(table)
seen = {}
duplicated = 0
mismatches = []
for row in frame.collect():
    got = plain(row)
    rid = got["id"]
    if rid in seen:
        duplicated += 1
    seen[rid] = got
    want = expected.get(rid)
    if want is not None and got != want:
        columns = sorted(c for c in set(got) | set(want) if got.get(c) != want.get(c))
        mismatches.append({"id": rid, "columns": {c: {"spark": got.get(c), "expected": want.get(c)} for c in columns}})
emit(
    "read",
    rows=len(seen) + duplicated,
    schema=frame.schema.simpleString(),
    matched=sum(1 for rid in expected if rid in seen) - len(mismatches),
    missing=sum(1 for rid in expected if rid not in seen),
    unexpected=sum(1 for rid in seen if rid not in expected),
    duplicated=duplicated,
    mismatched=len(mismatches),
    mismatchSample=mismatches[:3],
)


# --- pruning: the scan's planned files under a partition filter, from Iceberg's scan metrics ----
def scanned_files(query):
    """Rows and the data files Iceberg's scan planned for `query` (its driver metric resultDataFiles)."""
    result = spark.sql(query)
    rows = result.collect()
    plan = result._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    for i in range(leaves.size()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("resultDataFiles"):
            return len(rows), int(metrics.apply("resultDataFiles").value())
    raise SystemExit(f"no Iceberg scan with a resultDataFiles metric in the plan of: {query}")


# The table holds still here: the test produces nothing more until this script says it is ready.
all_rows, all_files = scanned_files(f"SELECT id FROM {table}")
kind_rows, kind_files = scanned_files(f"SELECT id FROM {table} WHERE kind = '{args.filter_kind}'")
day_rows, day_files = scanned_files(f"SELECT id FROM {table} WHERE ts >= TIMESTAMP '{args.filter_day} 00:00:00'")
files_table = spark.sql(f"SELECT count(*) FROM {table}.files").first()[0]
emit(
    "pruning",
    dataFiles=int(files_table),
    all={"rows": all_rows, "files": all_files},
    kind={"rows": kind_rows, "files": kind_files},
    day={"rows": day_rows, "files": day_files},
)

# --- append: Spark's INSERT INTO while Floe keeps committing -----------------------------------
columns = spark.table(table).columns
p = args.prefix.replace("'", "''")
values = {
    "id": f"concat('{p}', CAST(id AS STRING))",
    "ts": "timestamp_micros(1795824000000000 + id * 1000003)",  # 2026-11-28T00:00:00Z onwards
    "kind": "element_at(array('click', 'view', 'buy'), CAST(id % 3 AS INT) + 1)",
    "flag": "id % 2 = 0",
    "small": "CAST(id AS INT)",
    "big": "id * 3000000007",
    "ratio": "CAST(id / 8 AS FLOAT)",
    "amount": "id * 1.5D",
    "price": "CAST(id * 1.25 AS DECIMAL(9, 2))",
    "huge": "CAST(id AS DECIMAL(38, 10))",
    "day": "date_add(DATE '2026-11-28', CAST(id % 3 AS INT))",
    "local_ts": "make_timestamp_ntz(2026, 11, 28, 12, 0, CAST(id AS DECIMAL(8, 6)))",
    "uid": "uuid()",
    "label": "concat('spark ', CAST(id AS STRING))",
    "blob": "unhex(lpad(hex(id), 6, '0'))",
    "code": "unhex(lpad(hex(id), 8, '0'))",
    "tags": "array(concat('t', CAST(id AS STRING)), 'spark')",
    "attrs": "map('spark', id)",
    "place": "named_struct('x', id, 'name', 'spark', 'inner', named_struct('z', id * 0.5D))",
    "items": "array(named_struct('sku', concat('sku-', CAST(id AS STRING)), 'qty', CAST(id AS INT)))",
}
if sorted(columns) != sorted(values):
    raise SystemExit(f"the table's columns {columns} are not the ones this script writes {sorted(values)}")
select = ", ".join(f"{values[c]} AS {c}" for c in columns)

emit("ready")
if sys.stdin.readline().strip() != "go":
    raise SystemExit("stdin closed before the test said go")
spark.sql(f"INSERT INTO {table} SELECT {select} FROM range({args.spark_rows})")
ours = [
    str(r[0])
    for r in spark.sql(f"SELECT snapshot_id, summary FROM {table}.snapshots").collect()
    if "spark.app.id" in (r[1] or {})
]
emit("appended", rows=args.spark_rows, snapshots=ours)
spark.stop()

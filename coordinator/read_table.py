"""An independent reader for coordinator/commit-round.test.ts: pyiceberg opens a table of the
SQL catalog and prints, as JSON, main's snapshots (newest first, with their summaries), the
table properties and the data files main holds. Usage: read_table.py CATALOG_DB NAME TABLE"""

import json
import sys

from pyiceberg.catalog import load_catalog


def main():
    path, name, identifier = sys.argv[1:4]
    catalog = load_catalog(name, **{"type": "sql", "uri": f"sqlite:///{path}", "init_catalog_tables": "false"})
    table = catalog.load_table(identifier)
    snapshots = []
    snapshot = table.current_snapshot()
    while snapshot is not None:
        summary = {k: v for k, v in snapshot.summary.additional_properties.items()}
        summary["operation"] = snapshot.summary.operation.value
        snapshots.append({"id": str(snapshot.snapshot_id), "summary": summary})
        parent = snapshot.parent_snapshot_id
        snapshot = table.snapshot_by_id(parent) if parent is not None else None
    files = []
    current = table.current_snapshot()
    if current is not None:
        for manifest in current.manifests(table.io):
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
                files.append(entry.data_file.file_path)
    print(json.dumps({"snapshots": snapshots, "properties": dict(table.properties), "files": sorted(files)}))


if __name__ == "__main__":
    main()

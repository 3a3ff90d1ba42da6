"""Sums a V8 heap snapshot (.heapsnapshot, as node:v8 writeHeapSnapshot writes it) by what holds
the memory: each node's self size under its constructor's name (objects), or its type (strings,
code, arrays, native) when it has none, largest first.

Usage: heap_summary.py SNAPSHOT [TOP]
"""

import json
import sys
from collections import defaultdict


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    with open(path, encoding="utf-8") as file:
        snapshot = json.load(file)
    meta = snapshot["snapshot"]["meta"]
    fields = meta["node_fields"]
    width = len(fields)
    types = meta["node_types"][fields.index("type")]
    at_type, at_name, at_size = fields.index("type"), fields.index("name"), fields.index("self_size")
    names = snapshot["strings"]
    nodes = snapshot["nodes"]
    sizes = defaultdict(int)
    counts = defaultdict(int)
    total = 0
    for i in range(0, len(nodes), width):
        kind = types[nodes[i + at_type]]
        size = nodes[i + at_size]
        key = names[nodes[i + at_name]] if kind == "object" else f"({kind})"
        sizes[key] += size
        counts[key] += 1
        total += size
    print(f"{path}: {total / 2**20:.1f} MiB in {len(nodes) // width} nodes")
    for key, size in sorted(sizes.items(), key=lambda item: -item[1])[:top]:
        print(f"{size / 2**20:9.1f} MiB {counts[key]:9d}  {key[:80]}")


if __name__ == "__main__":
    main()

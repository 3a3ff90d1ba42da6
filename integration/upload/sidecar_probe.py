"""Reads objects Floe uploaded, independently of Floe's code: the data file with pyarrow (through
adlfs for abfs:// locations), and the bloom-filter sidecar by following docs/bloom-sidecar.md
alone, including its own xxHash64, so the document is shown to be enough to build a reader.

Usage: sidecar_probe.py REQUEST_JSON
  {"data": LOCATION, "sidecar": LOCATION, "connectionString": STR | null,
   "probes": [{"fieldId": N, "type": "long" | "string", "value": STR}]}
Prints {"rows": N, "rowGroups": N, "filters": [[fieldId, rowGroup, numBytes]], "probes": [bool]}.
"""

import json
import struct
import sys
import zlib

import pyarrow.parquet as pq

MASK = (1 << 64) - 1
P1, P2, P3, P4, P5 = (
    0x9E3779B185EBCA87,
    0xC2B2AE3D27D4EB4F,
    0x165667B19E3779F9,
    0x85EBCA77C2B2AE63,
    0x27D4EB2F165667C5,
)


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def round_(acc, lane):
    return (rotl((acc + lane * P2) & MASK, 31) * P1) & MASK


def xxh64(data, seed=0):
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & MASK, (seed + P2) & MASK, seed, (seed - P1) & MASK]
        while i + 32 <= n:
            for k in range(4):
                v[k] = round_(v[k], struct.unpack_from("<Q", data, i)[0])
                i += 8
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & MASK
        for lane in v:
            h = ((h ^ round_(0, lane)) * P1 + P4) & MASK
    else:
        h = (seed + P5) & MASK
    h = (h + n) & MASK
    while i + 8 <= n:
        h = (rotl(h ^ round_(0, struct.unpack_from("<Q", data, i)[0]), 27) * P1 + P4) & MASK
        i += 8
    if i + 4 <= n:
        h = (rotl(h ^ (struct.unpack_from("<I", data, i)[0] * P1 & MASK), 23) * P2 + P3) & MASK
        i += 4
    while i < n:
        h = (rotl(h ^ (data[i] * P5 & MASK), 11) * P1) & MASK
        i += 1
    h ^= h >> 33
    h = (h * P2) & MASK
    h ^= h >> 29
    h = (h * P3) & MASK
    return h ^ (h >> 32)


SALT = [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31]


def sbbf_contains(bitset, h):
    blocks = len(bitset) // 32
    block = ((h >> 32) * blocks) >> 32
    low = h & 0xFFFFFFFF
    for k in range(8):
        word = struct.unpack_from("<I", bitset, block * 32 + 4 * k)[0]
        if not word & (1 << (((low * SALT[k]) & 0xFFFFFFFF) >> 27)):
            return False
    return True


def parse_sidecar(data):
    magic, version, entry_size, count, crc = struct.unpack_from("<4sHHII", data, 0)
    assert magic == b"FLBF", magic
    assert version == 1, version
    assert zlib.crc32(data[16:]) == crc, "crc"
    filters = []
    for k in range(count):
        field_id, row_group, offset, num_bytes, algorithm, hash_, compression = struct.unpack_from(
            "<iiQIBBB", data, 16 + k * entry_size
        )
        assert (algorithm, hash_, compression) == (0, 0, 0)
        filters.append((field_id, row_group, data[offset : offset + num_bytes]))
    return filters


def plain(kind, value):
    if kind == "long":
        return struct.pack("<q", int(value))
    if kind == "string":
        return value.encode("utf-8")
    raise ValueError(kind)


def open_location(location, connection_string):
    if location.startswith("abfs://"):
        import adlfs

        container, rest = location[len("abfs://") :].split("@", 1)
        path = rest.split("/", 1)[1]
        fs = adlfs.AzureBlobFileSystem(connection_string=connection_string)
        return fs.open(f"{container}/{path}", "rb")
    return open(location.removeprefix("file://"), "rb")


request = json.loads(sys.argv[1])
with open_location(request["data"], request.get("connectionString")) as f:
    metadata = pq.ParquetFile(f).metadata
with open_location(request["sidecar"], request.get("connectionString")) as f:
    filters = parse_sidecar(f.read())
answers = []
for probe in request["probes"]:
    h = xxh64(plain(probe["type"], probe["value"]))
    answers.append(any(sbbf_contains(bits, h) for fid, _, bits in filters if fid == probe["fieldId"]))
json.dump(
    {
        "rows": metadata.num_rows,
        "rowGroups": metadata.num_row_groups,
        "filters": [[fid, rg, len(bits)] for fid, rg, bits in filters],
        "probes": answers,
    },
    sys.stdout,
)

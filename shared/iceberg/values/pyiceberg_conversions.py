"""pyiceberg's single-value serializations and ISO-8601 parsing, for serialize.pyiceberg.test.ts.

Input (stdin, JSON): {"serialize": [{"type", "value"}], "parse": [{"type", "text"}]} with values
encoded as the test encodes them (long, time, timestamps and decimal unscaled values as decimal
strings; floats as text; uuid, binary and fixed as hex; others as they are).
Output: {"serialize": [{"bytes": hex of to_bytes, "json": to_json}], "parse": [micros or days as a
string]}, every integer in "json" as a decimal string so no precision is lost on the way back.
"""

import json
import sys
from decimal import Decimal
from uuid import UUID

from pydantic import TypeAdapter
from pyiceberg.conversions import to_bytes, to_json
from pyiceberg.types import PrimitiveType
from pyiceberg.utils.datetime import date_str_to_days, time_str_to_micros, timestamp_to_micros, timestamptz_to_micros
from pyiceberg.utils.decimal import unscaled_to_decimal


def iceberg_type(name: str) -> PrimitiveType:
    return TypeAdapter(PrimitiveType).validate_python(name)


def decode(type_name: str, value):
    if type_name in ("long", "time", "timestamp", "timestamptz"):
        return int(value)
    if type_name in ("float", "double"):
        return float(value)
    if type_name.startswith("decimal"):
        return unscaled_to_decimal(int(value), iceberg_type(type_name).scale)
    if type_name == "uuid":
        return UUID(hex=value)
    if type_name == "binary" or type_name.startswith("fixed"):
        return bytes.fromhex(value)
    return value


def plain(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return str(value)
    return value


PARSERS = {
    "date": date_str_to_days,
    "time": time_str_to_micros,
    "timestamp": timestamp_to_micros,
    "timestamptz": timestamptz_to_micros,
}


def main() -> None:
    request = json.load(sys.stdin)
    serialized = []
    for case in request["serialize"]:
        source = iceberg_type(case["type"])
        value = decode(case["type"], case["value"])
        serialized.append({"bytes": to_bytes(source, value).hex(), "json": plain(to_json(source, value))})
    parsed = [str(PARSERS[case["type"]](case["text"])) for case in request["parse"]]
    json.dump({"serialize": serialized, "parse": parsed}, sys.stdout)


if __name__ == "__main__":
    main()

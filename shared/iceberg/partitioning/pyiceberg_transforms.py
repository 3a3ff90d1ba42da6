"""Applies pyiceberg's partition transforms to the cases on stdin, for transform.pyiceberg.test.ts.

Input: JSON list of {"transform", "type", "value"} with values encoded as the test encodes them
(int and date as numbers; long, time and timestamps as decimal strings; decimals as unscaled
decimal strings; floats as their text, so 1e16 and -0 stay floats; uuid, binary and fixed as hex;
others as they are). Output: JSON list of
{"result", "human"}, the result encoded as the input but with every integer as a decimal string,
plus {"path"} (partition_to_path of a one-field spec) for the cases that carry a "name".
"""

import json
import sys
from decimal import Decimal
from uuid import UUID

from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import parse_transform
from pyiceberg.typedef import Record
from pyiceberg.types import NestedField, PrimitiveType
from pyiceberg.utils.decimal import unscaled_to_decimal
from pydantic import TypeAdapter


def iceberg_type(name: str) -> PrimitiveType:
    return TypeAdapter(PrimitiveType).validate_python(name)


def decode(type_name: str, value):
    if value is None:
        return None
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


def encode(value):
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        sign, digits, _ = value.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0")
        return str(-unscaled if sign else unscaled)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, UUID):
        return value.hex
    raise TypeError(f"cannot encode {value!r}")


def main() -> None:
    out = []
    for case in json.load(sys.stdin):
        source = iceberg_type(case["type"])
        transform = parse_transform(case["transform"])
        value = decode(case["type"], case["value"])
        result = transform.transform(source)(value)
        answer = {"result": encode(result), "human": transform.to_human_string(transform.result_type(source), result)}
        if "name" in case:
            schema = Schema(NestedField(1, "src", source, required=False))
            spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=transform, name=case["name"]))
            answer["path"] = spec.partition_to_path(Record(result), schema)
        out.append(answer)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

"""Validates Kubernetes manifests offline and prints one JSON report.

Built-in kinds go through kubernetes-validate, which ships the Kubernetes OpenAPI schemas of each
release (strict: a field the schema does not name is an error, as `kubectl apply --validate=strict`
says). KEDA's kinds (keda.sh) go through the JSON schema of cloudcoil's KEDA models, which are
generated from KEDA's CRDs: made strict the same way, since a CRD schema lets unknown fields pass
and the API server would only drop them (a misspelt `maxReplicaCount` would be silently lost).

usage: validate_manifests.py --version 1.29.0 --version 1.37.0 FILE...
"""
import argparse
import json
import sys

import jsonschema
import yaml
from cloudcoil.models.keda import v1alpha1 as keda
from kubernetes_validate import utils as kubernetes

KEDA_MODELS = {
    "ScaledObject": keda.ScaledObject,
    "TriggerAuthentication": keda.TriggerAuthentication,
    "ScaledJob": keda.ScaledJob,
    "ClusterTriggerAuthentication": keda.ClusterTriggerAuthentication,
}


def strict(schema):
    """Every object schema that lists its properties refuses others."""
    if isinstance(schema, dict):
        if "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
        for value in schema.values():
            strict(value)
    elif isinstance(schema, list):
        for value in schema:
            strict(value)
    return schema


def keda_schema(kind):
    schema = KEDA_MODELS[kind].model_json_schema(by_alias=True, mode="validation")
    # metadata is Kubernetes' own ObjectMeta, checked by kind-independent rules below
    schema["properties"]["metadata"] = {"type": "object"}
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "metadata", "spec"})
    return strict(schema)


def check(doc, versions):
    api_version = doc.get("apiVersion", "")
    kind = doc.get("kind", "")
    if api_version.startswith("keda.sh/"):
        if api_version != "keda.sh/v1alpha1" or kind not in KEDA_MODELS:
            return f"unknown KEDA kind {api_version} {kind}"
        errors = sorted(jsonschema.Draft202012Validator(keda_schema(kind)).iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            return "; ".join(f"{'.'.join(str(p) for p in e.path) or '(root)'}: {e.message}" for e in errors[:5])
        name = (doc.get("metadata") or {}).get("name")
        return None if name else "metadata.name is missing"
    for version in versions:
        try:
            kubernetes.validate(doc, version, strict=True)
        except kubernetes.ValidationError as error:
            path = ".".join(str(p) for p in error.path) or "(root)"
            return f"Kubernetes {version}: {path}: {error.message}"
        except (kubernetes.SchemaNotFoundError, kubernetes.InvalidSchemaError) as error:
            return f"Kubernetes {version}: {error}"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", action="append", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    report = []
    for path in args.files:
        with open(path, encoding="utf-8") as handle:
            docs = [doc for doc in yaml.safe_load_all(handle) if doc is not None]
        for doc in docs:
            error = check(doc, args.version)
            report.append({
                "file": path,
                "apiVersion": doc.get("apiVersion"),
                "kind": doc.get("kind"),
                "name": (doc.get("metadata") or {}).get("name"),
                "error": error,
            })
    print(json.dumps(report))
    sys.exit(1 if any(item["error"] for item in report) else 0)


main()

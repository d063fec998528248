"""The Kubernetes OpenAPI schemas that kubernetes-validate bundles: validation, and the strategic-merge
metadata (x-kubernetes-patch-strategy / -merge-key) that patches need."""
import json
import re
from functools import lru_cache

import importlib_resources
import kubernetes_validate
import kubernetes_validate.utils

# kubernetes-validate reads the (large) definitions file again for every object; read each file once.
kubernetes_validate.utils.schema_contents = lru_cache(maxsize=None)(kubernetes_validate.utils.schema_contents)

VALIDATION_VERSIONS = ["1.30.0", "1.37.0"]
PATCH_SCHEMA_VERSION = "1.37.0"


def api_file_name(resource):
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", resource["apiVersion"])
    return f"{resource['kind'].lower()}-{group_version}.json"


@lru_cache(maxsize=None)
def _load(relative):
    path = importlib_resources.files("kubernetes_validate").joinpath("kubernetes-json-schema", relative)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def kind_schema(resource, version=PATCH_SCHEMA_VERSION):
    """The (non-strict) schema of the resource's kind, or None for kinds it does not know (CRDs)."""
    return _load(f"v{version}-local/{api_file_name(resource)}")


def resolve(node, version=PATCH_SCHEMA_VERSION):
    """Follows $ref into the definitions until a concrete schema node."""
    while isinstance(node, dict) and "$ref" in node:
        name = node["$ref"].split("#/$defs/")[-1]
        node = _load(f"v{version}-local/_definitions.json")["$defs"][name]
    return node or {}


def child(node, key):
    node = resolve(node)
    properties = node.get("properties", {})
    if key in properties:
        return resolve(properties[key])
    additional = node.get("additionalProperties")
    return resolve(additional) if isinstance(additional, dict) else {}


def validate(resource, version):
    """None when valid; otherwise a one-line reason. Raises SchemaNotFound for kinds without a schema."""
    try:
        kubernetes_validate.validate(resource, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        path = ".".join(str(p) for p in error.path)
        return f"{path}: {error.message}" if path else error.message
    return None


SchemaNotFound = kubernetes_validate.SchemaNotFoundError

"""Strategic merge patch, as kubectl and kustomize apply it, driven by the Kubernetes schema's patch metadata:
maps merge, null deletes, lists with a patch merge key merge item by item, other lists are replaced."""
import copy

import kube_schema


class PatchError(ValueError):
    pass


def apply(original, patch, schema):
    """`original` patched by `patch` (both objects of one kind); `schema` is that kind's schema or None."""
    result = copy.deepcopy(original)
    _merge(result, patch, schema, path=[])
    return result


def _merge(target, patch, schema, path):
    for key, value in patch.items():
        where = ".".join(path + [key])
        if key.startswith("$"):
            raise PatchError(f"{where}: patch directives ({key}) are not supported by this renderer")
        sub = kube_schema.child(schema, key) if schema is not None else None
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value, sub, path + [key])
        elif isinstance(value, list) and isinstance(target.get(key), list):
            target[key] = _merge_list(target[key], value, sub, path + [key])
        else:
            target[key] = _without_nulls(value)


def _without_nulls(value):
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _merge_list(original, patch, schema, path):
    where = ".".join(path)
    if schema is None:
        raise PatchError(f"{where}: no schema tells how to merge this list (a custom resource): "
                         "replace the whole object instead")
    strategy = schema.get("x-kubernetes-patch-strategy", "")
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    if "merge" not in strategy.split(","):
        return copy.deepcopy(patch)
    if not merge_key:
        return original + [item for item in patch if item not in original]
    item_schema = kube_schema.resolve(schema.get("items", {}))
    merged = copy.deepcopy(original)
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise PatchError(f"{where}: every item needs its merge key {merge_key}")
        if any(k.startswith("$") for k in item):
            raise PatchError(f"{where}: patch directives are not supported by this renderer")
        match = next((m for m in merged if isinstance(m, dict) and m.get(merge_key) == item[merge_key]), None)
        if match is None:
            merged.append(_without_nulls(item))
        else:
            _merge(match, item, item_schema, path + [f"[{merge_key}={item[merge_key]}]"])
    return merged

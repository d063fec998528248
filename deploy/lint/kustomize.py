"""Renders a kustomization the way `kustomize build` / `kubectl kustomize` does, for the subset this project
uses: resources (files and directories), namespace, labels, images and patches (strategic merge, target taken
from the patch). Anything else in a kustomization is an error, never silently ignored.

Neither Debian 12 nor PyPI has a kustomize that reads current kustomizations (Debian's kubectl 1.20 embeds
kustomize 2.0), hence this renderer; transformers run in kustomize's order: patches, namespace, labels, images.
"""
import copy
from pathlib import Path

import yaml

import kube_schema
import strategic_merge

FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SUPPORTED_FIELDS = {"apiVersion", "kind", "resources", "namespace", "labels", "images", "patches"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume",
                  "StorageClass", "PriorityClass", "IngressClass", "RuntimeClass", "APIService",
                  "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}
TEMPLATE_PATHS = {"Deployment": [["spec", "template"]], "ReplicaSet": [["spec", "template"]],
                  "DaemonSet": [["spec", "template"]], "StatefulSet": [["spec", "template"]],
                  "Job": [["spec", "template"]], "ReplicationController": [["spec", "template"]],
                  "CronJob": [["spec", "jobTemplate"], ["spec", "jobTemplate", "spec", "template"]]}
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


class KustomizeError(ValueError):
    pass


def kustomization_file(directory):
    for name in FILE_NAMES:
        if (Path(directory) / name).is_file():
            return Path(directory) / name
    return None


def build(directory, _seen=None):
    """The resources of the kustomization in `directory`, transformed."""
    directory = Path(directory).resolve()
    seen = set(_seen or ())
    if directory in seen:
        raise KustomizeError(f"{directory}: cycle in resources")
    seen.add(directory)
    file = kustomization_file(directory)
    if file is None:
        raise KustomizeError(f"{directory}: no kustomization file")
    spec = yaml.safe_load(file.read_text()) or {}
    unknown = set(spec) - SUPPORTED_FIELDS
    if unknown:
        raise KustomizeError(f"{file}: fields {sorted(unknown)} are not supported by this renderer")
    if spec.get("kind", "Kustomization") != "Kustomization":
        raise KustomizeError(f"{file}: kind {spec.get('kind')} is not supported (only Kustomization)")

    resources = []
    for entry in spec.get("resources", []):
        if "://" in entry or entry.startswith(("github.com", "git@")):
            raise KustomizeError(f"{file}: remote resource {entry} is not supported")
        path = directory / entry
        if path.is_dir():
            resources += build(path, seen)
        elif path.is_file():
            resources += [r for r in yaml.safe_load_all(path.read_text()) if r]
        else:
            raise KustomizeError(f"{file}: resource {entry} does not exist")
    _check_unique(resources, file)

    for patch_entry in spec.get("patches", []):
        resources = _apply_patch(resources, patch_entry, directory, file)
    if spec.get("namespace"):
        _set_namespace(resources, spec["namespace"], file)
    for label_entry in spec.get("labels", []):
        _add_labels(resources, label_entry, file)
    for image in spec.get("images", []):
        _set_image(resources, image, file)
    _check_unique(resources, file)
    return resources


def resource_id(resource):
    metadata = resource.get("metadata", {})
    group = resource.get("apiVersion", "").rpartition("/")[0]
    return (group, resource.get("kind"), metadata.get("namespace", ""), metadata.get("name"))


def _check_unique(resources, file):
    seen = set()
    for resource in resources:
        key = resource_id(resource)
        if key in seen:
            raise KustomizeError(f"{file}: two resources with the id {key}")
        seen.add(key)


def _apply_patch(resources, entry, directory, file):
    if not isinstance(entry, dict) or set(entry) != {"path"}:
        raise KustomizeError(f"{file}: patch {entry} not supported: only `- path: file` (strategic merge, target "
                             "from the patch's own kind and name)")
    patch_file = directory / entry["path"]
    documents = [d for d in yaml.safe_load_all(patch_file.read_text()) if d]
    if len(documents) != 1:
        raise KustomizeError(f"{patch_file}: a patch file holds exactly one object")
    patch = documents[0]
    if isinstance(patch, list):
        raise KustomizeError(f"{patch_file}: JSON 6902 patches are not supported by this renderer")
    group = patch.get("apiVersion", "").rpartition("/")[0]
    name = patch.get("metadata", {}).get("name")
    namespace = patch.get("metadata", {}).get("namespace")
    matches = [i for i, r in enumerate(resources)
               if resource_id(r)[0] == group and r.get("kind") == patch.get("kind")
               and r.get("metadata", {}).get("name") == name
               and (namespace is None or r.get("metadata", {}).get("namespace") == namespace)]
    if len(matches) != 1:
        raise KustomizeError(f"{patch_file}: patch for {patch.get('kind')} {name} matches {len(matches)} resources")
    index = matches[0]
    try:
        resources[index] = strategic_merge.apply(resources[index], patch, kube_schema.kind_schema(patch))
    except strategic_merge.PatchError as error:
        raise KustomizeError(f"{patch_file}: {error}") from None
    return resources


def _set_namespace(resources, namespace, file):
    for resource in resources:
        kind = resource.get("kind")
        if kind in ("RoleBinding", "ClusterRoleBinding"):
            raise KustomizeError(f"{file}: {kind} subjects are not rewritten by this renderer")
        metadata = resource.setdefault("metadata", {})
        if kind == "Namespace":
            metadata["name"] = namespace
        elif kind not in CLUSTER_SCOPED:
            metadata["namespace"] = namespace


def _add_labels(resources, entry, file):
    unknown = set(entry) - {"pairs", "includeSelectors", "includeTemplates"}
    if unknown or entry.get("includeSelectors"):
        raise KustomizeError(f"{file}: labels entry {entry} not supported: only pairs, includeTemplates and "
                             "includeSelectors: false")
    pairs = {k: str(v) for k, v in (entry.get("pairs") or {}).items()}
    for resource in resources:
        resource.setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
        if entry.get("includeTemplates"):
            for path in TEMPLATE_PATHS.get(resource.get("kind"), []):
                node = resource
                for key in path:
                    node = node.setdefault(key, {}) if isinstance(node, dict) else None
                if isinstance(node, dict):
                    node.setdefault("metadata", {}).setdefault("labels", {}).update(pairs)


def split_image(image):
    """(name, tag, digest) of an image reference."""
    digest = ""
    if "@" in image:
        image, digest = image.split("@", 1)
    tag = ""
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        image, tag = image.rsplit(":", 1)
    return image, tag, digest


def _set_image(resources, entry, file):
    unknown = set(entry) - {"name", "newName", "newTag", "digest"}
    if unknown or "name" not in entry:
        raise KustomizeError(f"{file}: images entry {entry} not supported")

    def rewrite(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in CONTAINER_LISTS and isinstance(value, list):
                    for container in value:
                        if isinstance(container, dict) and "image" in container:
                            container["image"] = _rewritten(container["image"], entry)
                rewrite(value)
        elif isinstance(node, list):
            for item in node:
                rewrite(item)

    for resource in resources:
        rewrite(resource)


def _rewritten(image, entry):
    name, tag, digest = split_image(image)
    if name != entry["name"]:
        return image
    name = entry.get("newName", name)
    if "digest" in entry:
        return f"{name}@{entry['digest']}"
    if "newTag" in entry:
        return f"{name}:{entry['newTag']}"
    return name + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")


def dump(resources):
    return yaml.safe_dump_all([copy.deepcopy(r) for r in resources], sort_keys=False)

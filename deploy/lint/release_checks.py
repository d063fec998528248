"""The release the tree prepares (Sources/Telemetry/VERSION without its -dev suffix) is the image tag of every
Kubernetes overlay and of docker-compose.yml's default image; scripts/set-version --release updates all three."""
import re

import yaml

VERSION_FILE = "Sources/Telemetry/VERSION"
OVERLAYS = "deploy/kubernetes/overlays"
COMPOSE = "docker-compose.yml"
COMPOSE_IMAGE = re.compile(r"\$\{COUNTDOWN_IMAGE:-[^:}]+:([^}]+)\}")


def check(repo, report):
    version = (repo / VERSION_FILE).read_text().strip()
    release = re.sub(r"-dev$", "", version)
    checked = 0
    for path in sorted((repo / OVERLAYS).glob("*/kustomization.yaml")):
        where = str(path.relative_to(repo))
        images = [i for i in yaml.safe_load(path.read_text()).get("images", []) if i.get("name") == "countdown"]
        if not images:
            report.error(where, "has no images: entry for countdown")
        for image in images:
            tag = str(image.get("newTag", ""))
            if tag != release and not image.get("digest"):
                report.error(where, f"newTag {tag!r} is not the release {release!r} ({VERSION_FILE} {version}): "
                                    f"scripts/set-version --release {release}")
            checked += 1
    match = COMPOSE_IMAGE.search((repo / COMPOSE).read_text())
    if not match:
        report.error(COMPOSE, "the countdown image is not ${COUNTDOWN_IMAGE:-countdown:<release>}")
    elif match.group(1) != release:
        report.error(COMPOSE, f"default image tag {match.group(1)!r} is not the release {release!r}: "
                              f"scripts/set-version --release {release}")
    else:
        checked += 1
    return f"release {release}, {checked} image references"

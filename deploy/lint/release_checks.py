"""The release the tree names: Sources/Telemetry/VERSION is a release (X.Y.Z, with its CHANGELOG section and date)
or the next one's development version (X.Y.Z-dev, the overlays still naming the last release of CHANGELOG.md).
Every Kubernetes overlay and docker-compose.yml's default image carry that release's tag, and a digest only when it
is the one deploy/release-digests.txt records for that tag. scripts/set-version --release writes all of them
(scripts/lib/release_tags.py, whose parsing this shares); a scratch run of it is checked here too."""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "lib"))
import release_tags  # noqa: E402

VERSION_FILE = "Sources/Telemetry/VERSION"
CHANGELOG = "CHANGELOG.md"
RELEASED = re.compile(r"(?m)^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$")
UNRELEASED = re.compile(r"(?m)^## \[Unreleased\]\s*$")
FAKE_DIGEST = "sha256:" + "ab" * 32


def check(repo, report):
    version = (repo / VERSION_FILE).read_text().strip()
    changelog = (repo / CHANGELOG).read_text()
    released = RELEASED.findall(changelog)
    if not UNRELEASED.search(changelog):
        report.error(CHANGELOG, "has no `## [Unreleased]` section for what lands after the last release")
    if version.endswith("-dev"):
        release = released[0][0] if released else version[:-len("-dev")]
    else:
        release = version
        if release not in {v for v, _ in released}:
            report.error(CHANGELOG, f"{VERSION_FILE} is the release {release}, which has no `## [{release}] - <date>`")
    try:
        digests = release_tags.recorded_digests(repo)
    except ValueError as error:
        report.error(release_tags.DIGESTS, str(error))
        digests = {}
    checked = 0
    for path in sorted((repo / release_tags.OVERLAYS).glob("*/kustomization.yaml")):
        images = release_tags.overlay_images(path.read_text())
        if not images:
            report.error(str(path.relative_to(repo)), "has no images: entry for countdown")
        for tag, digest in images:
            _check_reference(str(path.relative_to(repo)), tag, digest, release, version, digests, report)
            checked += 1
    compose = release_tags.compose_image((repo / release_tags.COMPOSE).read_text())
    if not compose:
        report.error(release_tags.COMPOSE, "the countdown image is not ${COUNTDOWN_IMAGE:-countdown:<release>}")
    else:
        _check_reference(release_tags.COMPOSE, *compose, release, version, digests, report)
        checked += 1
    return f"release {release} ({VERSION_FILE} {version}), {checked} image references"


def _check_reference(where, tag, digest, release, version, digests, report):
    if tag != release:
        report.error(where, f"countdown tag {tag!r} is not the release {release!r} ({VERSION_FILE} {version}): "
                            f"scripts/set-version --release {release}")
    if digest and digests.get(tag) != digest:
        report.error(where, f"digest {digest} is not the one {release_tags.DIGESTS} records for {tag} "
                            f"({digests.get(tag) or 'none'}): the image of another release would run under this tag")


def check_set_version(repo, report):
    """scripts/set-version --release on a scratch copy of the files it writes: an unquoted tag is set, a digest of
    another version is dropped, the recorded one is written, and a file without a tag fails with nothing written."""
    with tempfile.TemporaryDirectory() as temp:
        scratch = Path(temp)
        for relative in [release_tags.COMPOSE, VERSION_FILE] + [str(p.relative_to(repo)) for p in
                                                                (repo / release_tags.OVERLAYS).glob("*/kustomization.yaml")]:
            (scratch / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(repo / relative, scratch / relative)
        overlays = sorted((scratch / release_tags.OVERLAYS).glob("*/kustomization.yaml"))
        first = overlays[0]
        text = first.read_text()
        text = re.sub(r'(?m)^(\s*)newTag: "([^"]*)".*$', lambda m: f"{m.group(1)}newTag: {m.group(2)}\n{m.group(1)}digest: {FAKE_DIGEST}",
                      text, count=1)
        first.write_text(text)
        compose = scratch / release_tags.COMPOSE
        compose.write_text(re.sub(r"(\$\{COUNTDOWN_IMAGE:-[^}@]+)\}", rf"\1@{FAKE_DIGEST}}}", compose.read_text(), count=1))

        def run(version):
            return subprocess.run([sys.executable, str(repo / "scripts/lib/release_tags.py"), str(scratch), version],
                                  capture_output=True, text=True)
        result = run("9.9.9")
        if result.returncode != 0:
            report.error("scripts/set-version", f"--release failed on the shipped files: {result.stderr.strip()}")
            return
        for path in overlays + [compose]:
            text = path.read_text()
            if FAKE_DIGEST in text:
                report.error("scripts/set-version", f"kept another version's digest in {path.relative_to(scratch)}")
            images = release_tags.overlay_images(text) if path != compose else [release_tags.compose_image(text)]
            if any(tag != "9.9.9" for tag, _ in images):
                report.error("scripts/set-version", f"did not set the tag in {path.relative_to(scratch)}: {images}")
        (scratch / release_tags.DIGESTS).write_text(f"9.9.10 {FAKE_DIGEST}\n")
        if run("9.9.10").returncode != 0 or any(d != FAKE_DIGEST for _, d in release_tags.overlay_images(first.read_text())):
            report.error("scripts/set-version", "did not pin the digest recorded for the release")
        before = {p: p.read_text() for p in overlays + [compose]}
        first.write_text(re.sub(r"(?m)^\s*newTag:.*\n", "", first.read_text()))
        before[first] = first.read_text()
        result = run("9.9.11")
        if result.returncode == 0:
            report.error("scripts/set-version", "succeeded although an overlay has no newTag")
        if any(p.read_text() != text for p, text in before.items()):
            report.error("scripts/set-version", "wrote files although one had no tag")
    return "tags, digests and a missing tag on a scratch copy"

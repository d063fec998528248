"""scripts/set-version --release X.Y.Z: the countdown image's tag (and the digest recorded for X.Y.Z, if any) in
every Kubernetes overlay's `images:` and in docker-compose.yml's ${COUNTDOWN_IMAGE:-countdown:X.Y.Z} default.
A digest of another version is dropped, never kept under the new tag. Exits 1, writing nothing, when a file has
no tag to set. Also imported by deploy/lint/release_checks.py (the same parsing, the same rules)."""
import re
import sys
from pathlib import Path

DIGESTS = "deploy/release-digests.txt"
OVERLAYS = "deploy/kubernetes/overlays"
COMPOSE = "docker-compose.yml"
# `- name: countdown` entries of a kustomization's images:, up to the next entry or top-level key.
IMAGE_ENTRY = re.compile(r"(?m)^(?P<indent>\s*)- name: countdown\s*\n(?P<body>(?:(?P=indent)  .*\n)*)")
NEW_TAG = re.compile(r"(?m)^(?P<key>\s*newTag:\s*)(?P<quote>[\"']?)(?P<tag>[^\"'\s#]*)(?P=quote)(?P<rest>.*)$")
DIGEST_LINE = re.compile(r"(?m)^\s*digest:\s*[\"']?(?P<digest>sha256:[0-9a-f]+)[\"']?.*\n")
COMPOSE_IMAGE = re.compile(r"\$\{COUNTDOWN_IMAGE:-(?P<name>[^:}@]+):(?P<tag>[^}@]+)(?:@(?P<digest>sha256:[0-9a-f]+))?\}")


def recorded_digests(repo):
    """version -> digest, from deploy/release-digests.txt (`<version> sha256:<hex>` lines, # comments)."""
    digests = {}
    path = Path(repo) / DIGESTS
    if path.exists():
        for number, raw in enumerate(path.read_text().splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or not re.fullmatch(r"sha256:[0-9a-f]{64}", parts[1]):
                raise ValueError(f"{DIGESTS}:{number}: expected `<version> sha256:<64 hex>`, got {raw!r}")
            digests[parts[0]] = parts[1]
    return digests


def overlay_images(text):
    """[(tag, digest)] of the countdown entries of a kustomization's images:."""
    found = []
    for entry in IMAGE_ENTRY.finditer(text):
        tag = NEW_TAG.search(entry.group("body"))
        digest = DIGEST_LINE.search(entry.group("body"))
        found.append((tag.group("tag") if tag else None, digest.group("digest") if digest else None))
    return found


def compose_image(text):
    match = COMPOSE_IMAGE.search(text)
    return (match.group("tag"), match.group("digest")) if match else None


def set_overlay(text, version, digest, notes):
    def entry(match):
        body = match.group("body")
        tag = NEW_TAG.search(body)
        if not tag:
            raise LookupError("its countdown image has no newTag")
        old = DIGEST_LINE.search(body)
        if old and old.group("digest") != digest:
            notes.append(f"dropped digest {old.group('digest')} (not the one recorded for {version})")
        body = DIGEST_LINE.sub("", body)
        body = NEW_TAG.sub(lambda m: f"{m.group('key')}\"{version}\"{m.group('rest')}", body, count=1)
        if digest:
            line_indent = re.match(r"\s*", tag.group("key").lstrip("\n")).group(0)
            body += f"{line_indent}digest: {digest}\n"
        return match.group("indent") + "- name: countdown\n" + body
    text, count = IMAGE_ENTRY.subn(entry, text)
    if count == 0:
        raise LookupError("has no images: entry named countdown")
    return text


def set_compose(text, version, digest, notes):
    match = COMPOSE_IMAGE.search(text)
    if not match:
        raise LookupError("has no ${COUNTDOWN_IMAGE:-countdown:<tag>} default")
    if match.group("digest") and match.group("digest") != digest:
        notes.append(f"dropped digest {match.group('digest')} (not the one recorded for {version})")
    reference = f"{match.group('name')}:{version}" + (f"@{digest}" if digest else "")
    return text[:match.start()] + "${COUNTDOWN_IMAGE:-" + reference + "}" + text[match.end():]


def main(repo, version):
    repo = Path(repo)
    try:
        digest = recorded_digests(repo).get(version)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    changes = []
    failures = []
    for path in sorted((repo / OVERLAYS).glob("*/kustomization.yaml")) + [repo / COMPOSE]:
        notes = []
        try:
            setter = set_compose if path.name == COMPOSE else set_overlay
            changes.append((path, setter(path.read_text(), version, digest, notes), notes))
        except LookupError as error:
            failures.append(f"{path.relative_to(repo)} {error}")
    if failures:
        for failure in failures:
            print(f"error: {failure}: nothing written", file=sys.stderr)
        return 1
    for path, text, notes in changes:
        path.write_text(text)
        suffix = f"@{digest}" if digest else ""
        print(f"{path.relative_to(repo)}: countdown {version}{suffix}" + "".join(f"; {n}" for n in notes))
    if not digest:
        print(f"no digest recorded for {version} in {DIGESTS}: after pushing the image, add `{version} sha256:<digest>` "
              "there and run this again to pin it")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))

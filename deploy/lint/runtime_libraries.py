"""The shared libraries that built executables load, against the packages of the runtime stage.

A release image links the Swift runtime statically, so the check follows the executable's own NEEDED entries
and, through any Swift toolchain library, that library's NEEDED entries too; every system library reached must
belong to a runtime-stage package, to a package those depend on, or to the base image's C/C++ runtime."""
import re
import subprocess
from pathlib import Path

BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}  # in debian:bookworm-slim (apt needs them)


def check(repo, executables, runtime_packages, report):
    built = _built_executables(repo, executables)
    if not built:
        report.note("no build of the executables under .build: shared libraries not checked "
                    "(scripts/test builds before it runs lint-deploy)")
        return "no build"
    allowed = allowed_packages(runtime_packages)
    owners = {}
    for executable in built:
        for library in system_libraries(executable):
            package = owners.setdefault(library, owner(library))
            if package is None:
                report.warn(str(executable.relative_to(repo)), f"loads {library}, which no Debian package owns")
            elif package not in allowed:
                report.error(str(executable.relative_to(repo)),
                             f"loads {library} from {package}, which the runtime stage does not install")
    return f"{len(built)} executables under {built[0].parent.relative_to(repo)}"


def allowed_packages(runtime_packages):
    return _dependency_closure(set(runtime_packages)) | BASE_IMAGE_PACKAGES


def _built_executables(repo, executables):
    """The executables of the most recent complete build (debug or release)."""
    builds = []
    for configuration in ("release", "debug"):
        paths = [repo / ".build" / configuration / name for name in executables]
        if all(p.is_file() for p in paths):
            builds.append((min(p.stat().st_mtime for p in paths), paths))
    return max(builds)[1] if builds else []


def _needed(path):
    result = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", result.stdout)


def _resolved(executable):
    result = subprocess.run(["ldd", str(executable)], capture_output=True, text=True)
    return dict(re.findall(r"^\s*(\S+) => (/\S+)", result.stdout, re.M))


def system_libraries(executable):
    """Paths of the system libraries reached from the executable through toolchain (Swift) libraries."""
    resolved = _resolved(executable)
    toolchain = {name for name, path in resolved.items() if "/swift/" in path or "/usr/lib/swift" in path}
    found, queue, seen = set(), [executable], set()
    while queue:
        current = queue.pop()
        for name in _needed(current):
            path = resolved.get(name)
            if path is None or path in seen:
                continue
            seen.add(path)
            if name in toolchain:
                queue.append(Path(path))
            else:
                found.add(str(Path(path).resolve()) if not path.startswith("/lib/") else path)
    return sorted(found)


def owner(library):
    for candidate in {library, str(Path(library).resolve()), library.replace("/lib/", "/usr/lib/", 1)}:
        result = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(":", 1)[0].strip()
    return None


def _dependency_closure(packages):
    """`packages` and everything they depend on, from dpkg's record of installed packages."""
    result = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Provides}\t${Depends}\t${Pre-Depends}\n"],
                            capture_output=True, text=True)
    depends, providers = {}, {}
    for line in result.stdout.splitlines():
        name, provides, *deps = line.split("\t")
        depends[name] = [re.split(r"[\s(:]", alt.strip())[0] for field in deps for group in field.split(",")
                         for alt in group.split("|") if alt.strip()]
        for virtual in provides.split(","):
            if virtual.strip():
                providers.setdefault(re.split(r"[\s(]", virtual.strip())[0], []).append(name)
    closure, queue = set(), list(packages)
    while queue:
        name = queue.pop()
        if name in closure:
            continue
        closure.add(name)
        queue += depends.get(name, []) + providers.get(name, [])
    return closure

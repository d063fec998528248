"""What the deployment needs to know of Package.swift: executable products and system library packages."""
import re
import subprocess

EXECUTABLE = re.compile(r'\.executable\(\s*name:\s*"([^"]+)"')
TARGET_NAME = re.compile(r'name:\s*"([^"]+)"')
APT = re.compile(r'\.apt\(\s*\[([^\]]*)\]\s*\)')
STRING = re.compile(r'"([^"]*)"')


class Manifest:
    """Executable product names and, per system library target, the apt -dev packages it names."""

    def __init__(self, text):
        text = re.sub(r"//[^\n]*", "", text)
        self.executables = EXECUTABLE.findall(text)
        self.system_libraries = {}
        for body in _calls(text, ".systemLibrary("):
            name = TARGET_NAME.search(body)
            packages = [p for group in APT.findall(body) for p in STRING.findall(group)]
            if name:
                self.system_libraries[name.group(1)] = packages

    @property
    def dev_packages(self):
        return sorted({p for packages in self.system_libraries.values() for p in packages})


def _calls(text, opener):
    """The argument text of every call that starts with `opener`, balancing parentheses."""
    start = text.find(opener)
    while start != -1:
        depth, index = 1, start + len(opener)
        while index < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            index += 1
        yield text[start + len(opener):index - 1]
        start = text.find(opener, index)


# The runtime library package of each -dev package on Debian 12 (bookworm), the release of both image stages.
# Checked against the -dev package's own dependencies when dpkg or apt can tell (runtime_packages_from_debian).
RUNTIME_OF_DEV = {
    "libpq-dev": "libpq5",
    "libhiredis-dev": "libhiredis0.14",
    "libssl-dev": "libssl3",
    "libmicrohttpd-dev": "libmicrohttpd12",
    "libcurl4-openssl-dev": "libcurl4",
}


def runtime_packages_from_debian(dev_package):
    """The packages a -dev package depends on at exactly its own version (its runtime libraries), as dpkg
    (installed) or apt-cache (package lists) report them; None when neither knows the package."""
    for command in (["dpkg-query", "-W", "-f=${Depends}", dev_package],
                    ["apt-cache", "show", "--no-all-versions", dev_package]):
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode != 0 or not result.stdout.strip():
            continue
        depends = result.stdout
        if command[0] == "apt-cache":
            lines = [line for line in result.stdout.splitlines() if line.startswith("Depends:")]
            if not lines:
                continue
            depends = lines[0].split(":", 1)[1]
        return sorted(re.findall(r"([a-z0-9][a-z0-9.+-]+)\s*\(=\s*[^)]*\)", depends))
    return None


def debian_candidates(packages):
    """Package -> whether this Debian release has it (apt-cache policy, one call), or None when apt has no
    package lists to ask."""
    try:
        result = subprocess.run(["apt-cache", "policy", *packages], capture_output=True, text=True, timeout=60)
        sources = subprocess.run(["apt-cache", "policy"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    if "http" not in sources and "file:" not in sources:
        return None
    found = {}
    current = None
    for line in result.stdout.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
        elif current and line.strip().startswith("Candidate:"):
            found[current] = line.split(":", 1)[1].strip() != "(none)"
    return {package: found.get(package, False) for package in packages}

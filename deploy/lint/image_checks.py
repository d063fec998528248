"""The Dockerfile against Package.swift (packages, products), its own rules, and the .dockerignore."""
import os
import re
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from dockerfile import Dockerfile, apt_installed, stage_args
from dockerignore import DockerIgnore
from package_manifest import RUNTIME_OF_DEV, debian_candidates, runtime_packages_from_debian

BUILD_STAGE, RUNTIME_STAGE = "build", "runtime"
# The development image (`docker build --target development`): the fake FCM for the development compose stack, built
# in a stage of its own; the production image (the last stage, runtime) never copies from either.
DEVELOPMENT_BUILD_STAGE, DEVELOPMENT_STAGE = "build-development", "development"
DEVELOPMENT_OUT = "/out/development/"
REQUIRED_LABELS = ["org.opencontainers.image.title", "org.opencontainers.image.description",
                   "org.opencontainers.image.version", "org.opencontainers.image.revision"]
SECRET_FILE = re.compile(r"(\.p8|\.pem|\.key|service-account[^/]*\.json|\.env)$")
SECRET_NAME = re.compile(r"(PASSWORD|SECRET|TOKEN|PRIVATE|CREDENTIAL|_KEY$)", re.I)


# The image's one executable and where it lists its commands; the executable products in neither image.
MULTI_CALL = "countdown"
MULTI_CALL_SOURCE = "Sources/countdown/MultiCall.swift"
MULTI_CALL_TABLE = re.compile(r"static let commands = \[([^\]]*)\]")
NOT_IN_IMAGE = {"countdown-bench"}
PRODUCT = re.compile(r"--product\s+([\w-]+)")


def multi_call_commands(repo):
    """The commands the multi-call executable dispatches to, as the names it answers to (countdown-worker, ...)."""
    match = MULTI_CALL_TABLE.search((repo / MULTI_CALL_SOURCE).read_text())
    return ["countdown-" + name for name in re.findall(r'"([^"]+)"', match.group(1))] if match else []


def image_commands(repo):
    """The links to the multi-call executable that the build stage makes (its COMMANDS argument)."""
    build = Dockerfile((repo / "Dockerfile").read_text()).stage(BUILD_STAGE)
    return stage_args(build).get("COMMANDS", "").split() if build else []


def image_executables(repo, manifest):
    """What the image holds in /usr/local/bin: the multi-call executable and a link to it per command."""
    return [MULTI_CALL] + image_commands(repo)


def development_executables(repo):
    """What the development image holds in /usr/local/bin: the products its build stage builds."""
    stage = Dockerfile((repo / "Dockerfile").read_text()).stage(DEVELOPMENT_BUILD_STAGE)
    return [p for i in stage.all("RUN") for p in PRODUCT.findall(i.arguments)] if stage else []


def check_dockerfile(repo, manifest, tools, report):
    path = repo / "Dockerfile"
    where = "Dockerfile"
    dockerfile = Dockerfile(path.read_text())
    result = subprocess.run([tools.hadolint, "--no-color", "-c", str(repo / "deploy/lint/hadolint.yaml"), str(path)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        for line in (result.stdout + result.stderr).splitlines():
            report.error(where, f"hadolint: {line}")

    build, runtime = dockerfile.stage(BUILD_STAGE), dockerfile.stage(RUNTIME_STAGE)
    if not build or not runtime:
        report.error(where, f"needs the stages '{BUILD_STAGE}' and '{RUNTIME_STAGE}', has "
                            f"{[s.name for s in dockerfile.stages]}")
        return
    if dockerfile.stages[-1] is not runtime:
        report.error(where, f"the last stage (the image) must be '{RUNTIME_STAGE}'")
    _check_bases(dockerfile, build, runtime, report)
    _check_packages(manifest, build, installed_packages(dockerfile, runtime), report)
    _check_build(repo, manifest, build, runtime, report)
    _check_version(build, report)
    _check_runtime(repo, dockerfile, runtime, manifest, report)
    _check_development(repo, dockerfile, runtime, manifest, report)
    _check_no_secrets(dockerfile, report)
    _check_offline_build(path.read_text(), dockerfile, report)


SYNTAX_DIRECTIVE = re.compile(r"^#\s*syntax\s*=", re.I)


def installed_packages(dockerfile, stage):
    """The packages `apt-get install` puts into the stage: its own and those of the stages it is built FROM."""
    return [package for s in reversed(dockerfile.chain(stage)) for package in apt_installed(s)]


def _check_offline_build(text, dockerfile, report):
    """The image builds without a registry beyond its base images (scripts/compose-smoke builds it so): no
    `# syntax=` parser directive, which makes BuildKit fetch a frontend image first (the engine's built-in frontend
    builds this file); and the runtime stage's apt-get leaves no caches in its layer, whatever the base's apt
    settings."""
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if SYNTAX_DIRECTIVE.match(line):
            report.error("Dockerfile", f"`{line.strip()}` fetches the Dockerfile frontend from a registry before building; "
                                       "leave it out (the built-in frontend builds this file)")
    for stage in dockerfile.stages:
        if stage.name in (BUILD_STAGE, DEVELOPMENT_BUILD_STAGE):
            continue
        for instruction in stage.all("RUN"):
            if "apt-get install" in instruction.arguments and "apt-get clean" not in instruction.arguments:
                report.error(f"Dockerfile:{instruction.line}", f"stage {stage.name} installs packages without `apt-get "
                                                               "clean` (apt's caches would stay in the layer on some bases)")


def _check_bases(dockerfile, build, runtime, report):
    build_base, runtime_base = dockerfile.resolved_base(build), dockerfile.root_base(runtime)
    if not re.fullmatch(r"swift:6\.3(\.\d+)?-[a-z]+", build_base):
        report.error("Dockerfile", f"build stage must use the official Swift 6.3 image, uses {build_base}")
    release = build_base.rsplit("-", 1)[-1]
    if not re.fullmatch(rf"debian:{release}(-slim)?", runtime_base):
        report.error("Dockerfile", f"runtime base {runtime_base} is not the Debian release of the build stage "
                                   f"({release}): the C libraries would not match")


def _check_packages(manifest, build, installed, report):
    built_with = set(apt_installed(build))
    for dev in manifest.dev_packages:
        if dev not in built_with:
            report.error("Dockerfile", f"build stage does not install {dev} (a .systemLibrary provider)")
        expected = RUNTIME_OF_DEV.get(dev)
        from_debian = runtime_packages_from_debian(dev)
        if from_debian is not None and expected is not None and expected not in from_debian:
            report.error("deploy/lint/package_manifest.py",
                         f"RUNTIME_OF_DEV says {dev} -> {expected}, Debian says {from_debian}")
        candidates = from_debian if from_debian is not None else ([expected] if expected else [])
        if not candidates:
            report.error("Dockerfile", f"no runtime package known for {dev}: add it to RUNTIME_OF_DEV")
        for package in candidates:
            if package not in installed:
                report.error("Dockerfile", f"runtime stage does not install {package}, the runtime library of {dev}")
    for package in installed:
        if package.endswith("-dev"):
            report.error("Dockerfile", f"runtime stage installs a -dev package: {package}")
    known = debian_candidates(installed)
    if known is None:
        report.note("apt has no package lists here: runtime package names not looked up")
    for package in sorted(p for p, exists in (known or {}).items() if not exists):
        report.error("Dockerfile", f"runtime package {package} does not exist in this Debian release")
    if "pkg-config" not in built_with:
        report.error("Dockerfile", "build stage does not install pkg-config (system library targets use it)")


def _check_build(repo, manifest, build, runtime, report):
    runs = " ".join(i.arguments for i in build.all("RUN"))
    for needed in ("swift build", "-c release", "--static-swift-stdlib", f"--product {MULTI_CALL}", "/out/bin",
                   "${COMMANDS}", f"ln -s {MULTI_CALL} "):
        if needed not in runs:
            report.error("Dockerfile", f"build stage RUN does not contain `{needed}`: the image would not hold the "
                                       f"multi-call `{MULTI_CALL}` and a link per command")
    if MULTI_CALL not in manifest.executables:
        report.error("Package.swift", f"no executable product `{MULTI_CALL}` (the image's one executable)")
    known = multi_call_commands(repo)
    if not known:
        report.error(MULTI_CALL_SOURCE, "no `static let commands = [...]`: the commands of the image are unknown")
    commands = image_commands(repo)
    for command in commands:
        if command not in known:
            report.error("Dockerfile", f"COMMANDS links {command}, which `{MULTI_CALL}` does not run ({MULTI_CALL_SOURCE})")
        if command not in manifest.executables:
            report.error("Dockerfile", f"COMMANDS names {command}, which is no executable product (its thin main for "
                                       "development and tests)")
    for command in known:
        if command not in commands:
            report.error("Dockerfile", f"COMMANDS lacks {command}: `{MULTI_CALL}` runs it but the image has no link")
    development = development_executables(repo)
    for executable in manifest.executables:
        if executable != MULTI_CALL and executable not in known and executable not in NOT_IN_IMAGE | set(development):
            report.error("Package.swift", f"executable product {executable} is neither a command of `{MULTI_CALL}` "
                                          f"({MULTI_CALL_SOURCE}), nor built into the development image "
                                          f"(stage {DEVELOPMENT_BUILD_STAGE}), nor in NOT_IN_IMAGE (deploy/lint/image_checks.py)")
    copies = [i.flags_and_words() for i in runtime.all("COPY")]
    if not any(flags.get("from") == BUILD_STAGE and words[:1] == ["/out/bin/"] and words[-1] == "/usr/local/bin/"
               for flags, words in copies):
        report.error("Dockerfile", f"runtime stage must `COPY --from={BUILD_STAGE} /out/bin/ /usr/local/bin/`")
    copied = ["Package.swift", "Sources", "Tests"]
    for name in copied:
        if not any(words and words[0].rstrip("/") == name for flags, words in
                   (i.flags_and_words() for i in build.all("COPY"))):
            report.error("Dockerfile", f"build stage does not copy {name} (SwiftPM loads every target)")


VERSION_FILE = "Sources/Telemetry/VERSION"


def _check_version(build, report):
    """The VERSION build argument reaches the executables: written into the embedded VERSION file after the
    sources are copied and before the first `swift build`."""
    if "VERSION" not in stage_args(build):
        report.error("Dockerfile", "build stage has no `ARG VERSION` (what --version and countdown_build_info report)")
        return
    order = {"copy": None, "write": None, "build": None}
    for index, instruction in enumerate(build.instructions):
        if instruction.keyword == "COPY" and order["copy"] is None and "Sources" in instruction.arguments:
            order["copy"] = index
        if instruction.keyword == "RUN":
            writes = re.search(r">\s*" + re.escape(VERSION_FILE), instruction.arguments)
            if writes and "${VERSION}" in instruction.arguments and order["write"] is None:
                order["write"] = index
            if "swift build" in instruction.arguments and order["build"] is None:
                order["build"] = index
    if order["write"] is None:
        report.error("Dockerfile", f"build stage never writes ${{VERSION}} into {VERSION_FILE}")
    elif not (order["copy"] or -1) < order["write"] < (order["build"] if order["build"] is not None else 10**6):
        report.error("Dockerfile", f"{VERSION_FILE} must be written after COPY Sources and before swift build")


def _check_runtime(repo, dockerfile, runtime, manifest, report):
    users = runtime.all("USER")
    user = users[-1].arguments.split(":")[0] if users else "root"
    if not user.isdigit() or int(user) == 0:
        report.error("Dockerfile", f"image must run as a numeric non-root user (for runAsNonRoot), has USER {user}")
    labels = " ".join(i.arguments for i in dockerfile.all(runtime, "LABEL"))
    for label in REQUIRED_LABELS:
        if label + "=" not in labels:
            report.error("Dockerfile", f"missing label {label}")
    health = runtime.all("HEALTHCHECK")
    if not health:
        report.error("Dockerfile", "runtime stage has no HEALTHCHECK")
    else:
        command = health[-1].arguments.split("CMD", 1)[-1].strip()
        script = _copied_file(repo, runtime, _first_word(command))
        if script is None or "/healthz" not in script.read_text():
            report.error("Dockerfile", f"HEALTHCHECK ({command}) must run a script copied from the repository "
                                       "that requests /healthz")
        elif not os.access(script, os.X_OK):
            report.error(str(script.relative_to(repo)), "health check script is not executable")
    for keyword in ("ENTRYPOINT", "CMD"):
        found = runtime.all(keyword)
        if not found or found[-1].exec_form() is None:
            report.error("Dockerfile", f"{keyword} must be in exec form (a JSON array) so signals reach the process")
    cmd = runtime.all("CMD")
    image = image_executables(repo, manifest)
    if cmd and cmd[-1].exec_form() and cmd[-1].exec_form()[0] not in image:
        report.error("Dockerfile", f"CMD runs {cmd[-1].exec_form()[0]}, which is not in the image ({image})")


def _check_development(repo, dockerfile, runtime, manifest, report):
    """The development image: a stage of its own (not the last), built from its own build stage, holding development
    executables only, none of which the production image or the multi-call executable holds."""
    build, image = dockerfile.stage(DEVELOPMENT_BUILD_STAGE), dockerfile.stage(DEVELOPMENT_STAGE)
    if not build or not image:
        report.error("Dockerfile", f"needs the stages '{DEVELOPMENT_BUILD_STAGE}' and '{DEVELOPMENT_STAGE}' (the fake FCM "
                                   "of the development compose stack), has " + str([s.name for s in dockerfile.stages]))
        return
    if dockerfile.resolved_base(build) != BUILD_STAGE:
        report.error("Dockerfile", f"stage {DEVELOPMENT_BUILD_STAGE} must build FROM {BUILD_STAGE} (the same sources and version)")
    executables = development_executables(repo)
    if not executables:
        report.error("Dockerfile", f"stage {DEVELOPMENT_BUILD_STAGE} builds no `--product`")
    commands = set(multi_call_commands(repo)) | {MULTI_CALL}
    for executable in executables:
        if executable not in manifest.executables:
            report.error("Dockerfile", f"stage {DEVELOPMENT_BUILD_STAGE} builds {executable}, which is no executable product")
        if executable in commands:
            report.error("Dockerfile", f"stage {DEVELOPMENT_BUILD_STAGE} builds {executable}, a production command: "
                                       "the development image holds development executables only")
        if executable in NOT_IN_IMAGE:
            report.error("Dockerfile", f"{executable} is in NOT_IN_IMAGE but built into the development image")
    if DEVELOPMENT_OUT not in " ".join(i.arguments for i in build.all("RUN")):
        report.error("Dockerfile", f"stage {DEVELOPMENT_BUILD_STAGE} must install its executables into {DEVELOPMENT_OUT}")
    copies = [i.flags_and_words() for i in image.all("COPY")]
    if not any(flags.get("from") == DEVELOPMENT_BUILD_STAGE and words[:1] == [DEVELOPMENT_OUT] for flags, words in copies):
        report.error("Dockerfile", f"stage {DEVELOPMENT_STAGE} must `COPY --from={DEVELOPMENT_BUILD_STAGE} {DEVELOPMENT_OUT} ...`")
    for instruction in runtime.all("COPY"):
        flags, _ = instruction.flags_and_words()
        if flags.get("from") in (DEVELOPMENT_BUILD_STAGE, DEVELOPMENT_STAGE):
            report.error(f"Dockerfile:{instruction.line}", "the production image copies from a development stage")
    for stage in dockerfile.chain(runtime)[1:]:
        if stage.name in (DEVELOPMENT_STAGE, DEVELOPMENT_BUILD_STAGE, BUILD_STAGE):
            report.error("Dockerfile", f"the production image must not build FROM {stage.name}")
    for stage in dockerfile.chain(runtime):
        for instruction in stage.all("COPY"):
            flags, _ = instruction.flags_and_words()
            if flags.get("from") in (DEVELOPMENT_BUILD_STAGE, DEVELOPMENT_STAGE) and stage is not runtime:
                report.error(f"Dockerfile:{instruction.line}", "the production image copies from a development stage")
    users = image.all("USER")
    if not users or not users[-1].arguments.split(":")[0].isdigit() or users[-1].arguments.split(":")[0] == "0":
        report.error("Dockerfile", f"stage {DEVELOPMENT_STAGE} must run as a numeric non-root user, as the production image")


def _check_no_secrets(dockerfile, report):
    for stage in dockerfile.stages:
        for instruction in stage.all("COPY") + stage.all("ADD"):
            _, words = instruction.flags_and_words()
            for source in words[:-1]:
                if SECRET_FILE.search(source):
                    report.error(f"Dockerfile:{instruction.line}", f"copies a secret-looking file {source}")
        for instruction in stage.all("ENV") + stage.all("ARG"):
            for name in re.findall(r"(\w+)=", instruction.arguments) or [instruction.arguments.split()[0]]:
                if SECRET_NAME.search(name):
                    report.error(f"Dockerfile:{instruction.line}", f"{instruction.keyword} {name} looks like a "
                                                                    "secret: secrets come at run time, never in the image")


def _first_word(command):
    command = command.strip()
    if command.startswith("["):
        import json
        return json.loads(command)[0]
    return command.split()[0]


def _copied_file(repo, stage, target):
    """The repository file that a COPY instruction put at `target`, if any."""
    for instruction in stage.all("COPY"):
        flags, words = instruction.flags_and_words()
        if "from" in flags or len(words) != 2:
            continue
        source, destination = words
        if destination == target or (destination.endswith("/") and destination + Path(source).name == target):
            return repo / source
    return None


def check_dockerignore(repo, report):
    where = ".dockerignore"
    ignore = DockerIgnore((repo / where).read_text())
    dockerfile = Dockerfile((repo / "Dockerfile").read_text())
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout.split()
    for stage in dockerfile.stages:
        for instruction in stage.all("COPY") + stage.all("ADD"):
            flags, words = instruction.flags_and_words()
            if "from" in flags:
                continue
            for source in words[:-1]:
                source = source.rstrip("/")
                if not (repo / source).exists():
                    report.error(f"Dockerfile:{instruction.line}", f"COPY source {source} does not exist")
                    continue
                files = [f for f in tracked if f == source or f.startswith(source + "/")] or [source]
                for file in files:
                    if ignore.excluded(file):
                        report.error(where, f"excludes {file}, which the Dockerfile copies ({source})")
    for path in (".git/HEAD", ".build/debug/countdown-worker", "deploy/compose/secrets/fcm-service-account.json",
                 "docker-compose.override.yml", "deploy/kubernetes/secrets/countdown-fcm.yaml", ".env",
                 "Sources/.build/x", ".swiftpm/config"):
        if not ignore.excluded(path):
            report.error(where, f"does not exclude {path}")


def check_healthcheck_script(repo, report):
    """Runs the image's health check script against a local HTTP server: 0 on /healthz 200, non-zero on 503
    and on a closed port."""
    script = repo / "deploy/docker/countdown-healthcheck"
    where = str(script.relative_to(repo))
    if subprocess.run(["sh", "-n", str(script)]).returncode != 0:
        report.error(where, "sh -n: syntax error")
        return
    if not _which("curl"):
        report.note("curl not installed here: health check script not exercised")
        return
    status = {"code": 200}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(status["code"] if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        def run(env):
            return subprocess.run([str(script)], env={"PATH": os.environ["PATH"], **env},
                                  capture_output=True, timeout=20).returncode
        if run({"HTTP_ADDR": f"0.0.0.0:{port}"}) != 0:
            report.error(where, "fails against a healthy /healthz (HTTP_ADDR)")
        if run({"HEALTHCHECK_URL": f"http://127.0.0.1:{port}/healthz"}) != 0:
            report.error(where, "fails against a healthy /healthz (HEALTHCHECK_URL)")
        status["code"] = 503
        if run({"HTTP_ADDR": f"0.0.0.0:{port}"}) == 0:
            report.error(where, "succeeds although /healthz answers 503")
    finally:
        server.shutdown()
    closed = _free_port()
    if subprocess.run([str(script)], env={"PATH": os.environ["PATH"], "HTTP_ADDR": f"0.0.0.0:{closed}"},
                      capture_output=True, timeout=20).returncode == 0:
        report.error(where, "succeeds although nothing listens")


def _which(program):
    return any(os.access(os.path.join(d, program), os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

"""`scripts/lint-deploy --build`: runs the Dockerfile's build stage natively on this Debian 12 machine (the
image's release) without Docker: the same swift build commands, with /src as the repository and /out as a
temporary directory. Then the image's executables are exactly the built ones and their shared libraries come
from runtime-stage packages. Takes minutes (release builds), so it is opt-in."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import runtime_libraries
from dockerfile import Dockerfile, apt_installed, stage_args


def check(repo, expected_executables, report):
    dockerfile = Dockerfile((repo / "Dockerfile").read_text())
    build, runtime = dockerfile.stage("build"), dockerfile.stage("runtime")
    missing = [p for p in apt_installed(build) if subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout != "install ok installed"]
    if missing:
        report.error("Dockerfile", f"build stage packages not installed here: {' '.join(missing)} (apt-get install)")
        return None
    swift = shutil.which("swift")
    if not swift:
        report.error("--build", "no swift on PATH")
        return None
    libexec = Path(swift).resolve().parent.parent / "libexec"
    shell = next((i.exec_form() for i in build.all("SHELL")), None) or ["/bin/sh", "-c"]
    env = {**os.environ, **stage_args(build)}
    with tempfile.TemporaryDirectory() as out:
        for instruction in build.all("RUN"):
            command = instruction.arguments
            while command.startswith("--"):
                command = command.split(None, 1)[1]
            if "apt-get" in command:
                continue
            command = command.replace("/out/", f"{out}/").replace("/out ", f"{out} ").replace(
                "/usr/libexec/", f"{libexec}/").replace("/src/", f"{repo}/")
            result = subprocess.run(shell + [command], cwd=repo, env=env, capture_output=True, text=True)
            if result.returncode != 0:
                tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
                report.error(f"Dockerfile:{instruction.line}", f"build stage RUN failed:\n{tail}")
                return None
        built = sorted(p.name for p in (Path(out) / "bin").iterdir())
        if built != sorted(expected_executables):
            report.error("Dockerfile", f"build stage produced {built}, expected {sorted(expected_executables)}")
        allowed = runtime_libraries.allowed_packages([p for s in dockerfile.chain(runtime) for p in apt_installed(s)])
        for binary in (Path(out) / "bin" / name for name in built):
            for library in runtime_libraries.system_libraries(binary):
                package = runtime_libraries.owner(library)
                if package not in allowed:
                    report.error(f"image {binary.name}", f"loads {library} from {package}, which the runtime stage "
                                                         "does not install")
        return f"built {', '.join(built)} (release, static Swift stdlib)"

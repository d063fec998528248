"""The operator docs against what lint-deploy enforces: datastore ports the docs recommend are admitted by the
NetworkPolicies, the egress ports the validation section lists are the ones checked, and no doc tells operators to
leave unset a variable the manifests must set."""
import re

from kube_checks import WORKER_EGRESS_PORTS
from operator_checks import DATASTORE_PORTS

DOCS = ("README.md", "docs/deployment.md", "docs/operations.md", "docs/upgrading.md", "docs/runbooks.md")
DATASTORE_URL = re.compile(r"\b(?:postgres|postgresql|redis|rediss)://[^\s`'\"]*?:(\d{2,5})(?:/|\?|`|\s|$)")
EGRESS_SENTENCE = re.compile(r"worker egress only to ports ([\d,\s and]+)")
LEAVE_UNSET = re.compile(r"leave `(\w+)` unset")
REQUIRED_IN_CONFIG = {"FLEET_MAX_WORKERS", "FLEET_API_REPLICAS", "FLEET_WORKER_SURGE", "FLEET_API_SURGE",
                      "FLEET_CONSOLE_REPLICAS", "FLEET_CONSOLE_SURGE", "DATABASE_POOL_SIZE", "API_MAX_CONNECTIONS",
                      "API_TRUSTED_PROXIES", "CONSOLE_TRUSTED_PROXIES"}


MIGRATION = re.compile(r"Migration\(version: (\d+)")
ROLLBACK_ROW = re.compile(r"(?m)^\| (\d+) \| [^|]+ \| [^|]+ \|$")


def check_rollback_table(repo, report):
    """docs/upgrading.md says what a rollback past every migration needs (scripts/rehearse-upgrade --plan prints it)."""
    versions = {int(v) for path in (repo / "Sources").rglob("*.swift") for v in MIGRATION.findall(path.read_text())}
    rows = {int(v) for v in ROLLBACK_ROW.findall((repo / "docs/upgrading.md").read_text())}
    for version in sorted(versions - rows):
        report.error("docs/upgrading.md", f"migration {version} has no row in \"Rolling back past a migration\"")
    return len(versions)


def check(repo, report):
    checked = check_rollback_table(repo, report)
    for name in DOCS:
        path = repo / name
        if not path.exists():
            continue
        text = path.read_text()
        for number, line in enumerate(text.splitlines(), start=1):
            for match in DATASTORE_URL.finditer(line):
                checked += 1
                port = int(match.group(1))
                if port not in DATASTORE_PORTS:
                    report.error(f"{name}:{number}", f"recommends a datastore on port {port}, which the "
                                                     f"NetworkPolicies refuse (they admit {sorted(DATASTORE_PORTS)})")
            for match in LEAVE_UNSET.finditer(line):
                if match.group(1) in REQUIRED_IN_CONFIG:
                    report.error(f"{name}:{number}", f"says to leave {match.group(1)} unset; lint-deploy requires "
                                                     "it in countdown-config")
        flat = " ".join(text.split())
        for match in EGRESS_SENTENCE.finditer(flat):
            listed = {int(n) for n in re.findall(r"\d+", match.group(1))}
            if listed != WORKER_EGRESS_PORTS:
                report.error(name, f"lists worker egress ports {sorted(listed)}; lint-deploy checks "
                                   f"{sorted(WORKER_EGRESS_PORTS)}")
    return f"{checked} migrations and datastore addresses in {len(DOCS)} documents"

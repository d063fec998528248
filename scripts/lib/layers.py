"""The module graph's rules, checked against Package.swift (as `swift package dump-package` prints it) and against
the `import` lines of every target's sources. Used by scripts/check-layers."""
import json
import os
import re
import sys

# Modules of the toolchain and the system: importable without a declared dependency.
TOOLCHAIN = {"Foundation", "FoundationNetworking", "FoundationEssentials", "Dispatch", "Glibc", "Darwin", "Synchronization",
             "Testing", "XCTest", "_Concurrency", "Observation"}

# Layers, lowest first: a target may depend only on targets of a lower layer (the package layout is the
# architecture: C shims -> clients -> queue and push -> domain -> stores -> flows -> runtime -> executables).
LAYERS = [
    {"CLibPQ", "CHiredis", "COpenSSL", "CMicroHTTPD", "CCurl"},
    {"BlockingIO", "JSON", "HTTPTypes", "CivilTime"},
    {"Postgres", "Redis", "JWT", "HTTPClient", "HTTPServer", "Telemetry"},
    {"DelayQueue", "PushPayloads", "PushGuard", "Configuration", "Lifecycle"},
    {"Push"},
    {"CountdownDomain"},
    {"CountdownStore"},
    # TestSupport migrates the databases of its whole-system harness (CountdownSystem) with CountdownStore's Migrator.
    {"CountdownCommands", "CountdownFlows", "TestSupport"},
    {"CountdownMaintenance", "CountdownAPI"},
    {"CountdownWorker", "CountdownAdmin", "CountdownConsole"},
    {"WorkerCommand", "AdminCommand", "APICommand", "ConsoleCommand", "FakeFCMCommand"},
]

# The multi-call executable (the production image's one binary) and the production command libraries it dispatches
# to; each production executable is a thin main over exactly one of them, so both run the same code.
MULTI_CALL = "countdown"
COMMANDS = {"countdown-worker": "WorkerCommand", "countdown-admin": "AdminCommand", "countdown-api": "APICommand",
            "countdown-console": "ConsoleCommand"}
# Development executables, outside the production image (the development image holds the fake FCM): a thin main over
# their command library, or (None) an executable of its own.
DEVELOPMENT = {"countdown-fake-fcm": "FakeFCMCommand", "countdown-bench": None}
STANDALONE = {name for name, library in DEVELOPMENT.items() if library is None}

# Test code: only test targets and the benchmark (`countdown-bench system` runs the whole system on TestSupport's
# CountdownSystem) may depend on it; nothing the image ships.
TEST_ONLY = {"TestSupport"}

# What the production image's executable must not hold: the development command libraries and the test code.
NOT_IN_IMAGE = {library for library in DEVELOPMENT.values() if library} | TEST_ONLY

# Test doubles (fakes, in-memory stand-ins, capturing sinks, stubs) live in TestSupport or the test targets: a type
# declared under one of these names in a module of the production image is a test double shipped to production.
TEST_DOUBLE = re.compile(r"^\s*(?:(?:public|internal|package|fileprivate|private|final|open)\s+)*"
                         r"(?:struct|class|actor|enum|protocol)\s+((?:Fake|InMemory|Capturing|Stub|Mock|Spy)[A-Z]\w*)", re.M)

# What must stay out of reach, whatever the layers allow.
FORBIDDEN = {
    "CountdownDomain": {"BlockingIO", "Postgres", "Redis", "DelayQueue", "Push", "HTTPClient", "HTTPServer", "CLibPQ", "CHiredis", "CCurl",
                        "CMicroHTTPD", "COpenSSL", "Telemetry"},
    "CountdownStore": {"Redis", "DelayQueue", "Push", "HTTPClient", "CHiredis", "CCurl"},
    "CountdownCommands": {"Redis", "DelayQueue", "Push", "HTTPClient", "CHiredis", "CCurl"},
    "CountdownFlows": {"Redis", "DelayQueue", "Push", "HTTPClient", "CHiredis", "CCurl"},
    "AdminCommand": {"Push", "HTTPClient", "HTTPServer", "CCurl", "CMicroHTTPD", "CountdownWorker", "CountdownFlows"},
    "CountdownMaintenance": {"Push", "HTTPClient", "HTTPServer", "CCurl", "CMicroHTTPD", "CountdownFlows"},
    "APICommand": {"Redis", "DelayQueue", "Push", "HTTPClient", "CHiredis", "CCurl", "CountdownWorker", "CountdownFlows"},
    # The console reads the token guard's window through PushGuard; it sends no push.
    "ConsoleCommand": {"Push", "HTTPClient", "CCurl", "CountdownWorker", "CountdownFlows"},
}

# What a target must neither import nor depend on directly, though it may reach it through a lower layer: the flows
# reach PostgreSQL only through the stores' facade (CountdownStore's StoreClient and store types).
NOT_DIRECT = {
    "CountdownFlows": {"Postgres", "CLibPQ"},
}

# Names a target's code must not use (comments aside): the flows reach the database through the store protocols
# their FlowContext holds, never through a connection or a transaction lent to them.
REFUSED_NAMES = {
    "CountdownFlows": {"StoreConnection", "StoreClient", "PostgresConnection", "PostgresClient"},
}

# Every Redis key is spelled in one file: a key's hash tag, `"{\(namespace)}…`, written anywhere else is refused.
REDIS_KEYS = os.path.join("Sources", "Redis", "RedisKeys.swift")
REDIS_KEY = re.compile(r'"\{\\\(')

IMPORT = re.compile(r"^\s*(?:@testable\s+|@_implementationOnly\s+|@preconcurrency\s+|(?:public|internal|package)\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


def targets(package):
    """name -> (kind, path, direct dependencies)"""
    found = {}
    for target in package["targets"]:
        names = []
        for dep in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dep:
                    names.append(dep[kind][0])
        path = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", target["name"])
        found[target["name"]] = (target["type"], path, names)
    return found


def closure(graph, name):
    seen, todo = set(), [name]
    while todo:
        for dep in graph.get(todo.pop(), (None, None, []))[2]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def imports(path):
    """module -> first file importing it, for every Swift file below `path`."""
    found = {}
    for root, _, files in os.walk(path):
        for name in sorted(files):
            if name.endswith(".swift"):
                file = os.path.join(root, name)
                with open(file, encoding="utf-8") as handle:
                    for module in IMPORT.findall(handle.read()):
                        found.setdefault(module, file)
    return found


def names(path, refused):
    """(name, file) for each name of `refused` the Swift code below `path` uses outside comments."""
    found = []
    word = re.compile(r"\b(" + "|".join(sorted(refused)) + r")\b")
    for root, _, files in os.walk(path):
        for name in sorted(files):
            if name.endswith(".swift"):
                file = os.path.join(root, name)
                with open(file, encoding="utf-8") as handle:
                    code = "\n".join(line.split("//")[0] for line in handle.read().splitlines())
                for used in sorted(set(word.findall(code))):
                    found.append((used, file))
    return found


def spelled_redis_keys(root, path):
    """Files below `path` (but the key catalogue) whose code spells a Redis key's hash tag."""
    found = []
    for directory, _, files in os.walk(os.path.join(root, path)):
        for name in sorted(files):
            file = os.path.join(directory, name)
            if name.endswith(".swift") and os.path.relpath(file, root) != REDIS_KEYS:
                with open(file, encoding="utf-8") as handle:
                    if any(REDIS_KEY.search(line.split("//")[0]) for line in handle):
                        found.append(file)
    return found


def test_doubles(path):
    """(type name, file) for each type the Swift code below `path` declares under a test double's name."""
    found = []
    for root, _, files in os.walk(path):
        for name in sorted(files):
            if name.endswith(".swift"):
                file = os.path.join(root, name)
                with open(file, encoding="utf-8") as handle:
                    code = "\n".join(line.split("//")[0] for line in handle.read().splitlines())
                found += [(declared, file) for declared in TEST_DOUBLE.findall(code)]
    return found


def layer(name):
    for index, members in enumerate(LAYERS):
        if name in members:
            return index
    return None


def check(package, root="."):
    """The problems found, one line each (empty: the graph is sound)."""
    graph = targets(package)
    problems = []
    for name, (kind, path, deps) in sorted(graph.items()):
        if kind == "system-target":
            continue
        for module, file in sorted(imports(os.path.join(root, path)).items()):
            if module == name or module in TOOLCHAIN or module in deps:
                continue
            if module in graph:
                problems.append(f"{name} imports {module} ({file}) without declaring it in Package.swift")
        if kind == "regular":
            own = layer(name)
            if own is None:
                problems.append(f"{name} has no layer in scripts/lib/layers.py")
                continue
            for dep in deps:
                dep_layer = layer(dep)
                if dep_layer is not None and dep_layer >= own:
                    problems.append(f"{name} (layer {own}) depends on {dep} (layer {dep_layer}): only lower layers are allowed")
    for name, banned in NOT_DIRECT.items():
        if name not in graph:
            continue
        kind, path, deps = graph[name]
        for module in sorted(banned & set(deps)):
            problems.append(f"{name} depends on {module} directly")
        for module, file in sorted(imports(os.path.join(root, path)).items()):
            if module in banned:
                problems.append(f"{name} imports {module} ({file}) directly")
    for name, (kind, path, _) in sorted(graph.items()):
        if kind in ("regular", "executable") and path.startswith("Sources"):
            for file in spelled_redis_keys(root, path):
                problems.append(f"{name} spells a Redis key ({file}): name it in {REDIS_KEYS}")
    for name, refused in REFUSED_NAMES.items():
        if name in graph:
            for used, file in names(os.path.join(root, graph[name][1]), refused):
                problems.append(f"{name} uses {used} ({file}): it reaches the database through its store protocols only")
    for name, forbidden in FORBIDDEN.items():
        if name not in graph:
            continue
        bad = sorted(closure(graph, name) & forbidden)
        if bad:
            problems.append(f"{name} reaches {', '.join(bad)}")
    for name, (kind, _, deps) in sorted(graph.items()):
        if kind != "test" and name not in STANDALONE:
            for module in sorted(TEST_ONLY & set(deps)):
                problems.append(f"{name} depends on {module}: only test targets and {', '.join(sorted(STANDALONE))} may")
    problems += check_commands(graph)
    problems += check_image(graph, root)
    return problems


def check_image(graph, root):
    """The production image's executable holds no development command, no test code and no test double."""
    if MULTI_CALL not in graph:
        return []
    problems = []
    held = closure(graph, MULTI_CALL) | {MULTI_CALL}
    for module in sorted(held & NOT_IN_IMAGE):
        problems.append(f"{MULTI_CALL} (the production image) reaches {module}: development and test code stay out of the image")
    for module in sorted(held):
        kind, path, _ = graph.get(module, ("unknown", None, []))
        if path is None or kind == "system-target":
            continue
        for declared, file in test_doubles(os.path.join(root, path)):
            problems.append(f"{module} declares {declared} ({file}), a test double in a production module: move it to TestSupport")
    return problems


def check_commands(graph):
    """Every executable but the benchmark is a thin main over its command library, and the multi-call executable
    depends on every production command library (and on no other Countdown module but Telemetry, for its --version)."""
    problems = []
    if MULTI_CALL not in graph:
        return problems
    for name, (kind, _, deps) in sorted(graph.items()):
        if kind != "executable" or name == MULTI_CALL or name in STANDALONE:
            continue
        library = COMMANDS.get(name) or DEVELOPMENT.get(name)
        if library is None:
            problems.append(f"executable {name} is neither a production command of {MULTI_CALL} (scripts/lib/layers.py COMMANDS) "
                            "nor a DEVELOPMENT executable")
        elif deps != [library]:
            problems.append(f"{name} must depend on {library} only (a thin main), depends on {deps}")
    multi = set(graph[MULTI_CALL][2])
    for library in sorted(set(COMMANDS.values()) - multi):
        problems.append(f"{MULTI_CALL} does not depend on {library}: the image would lack that command")
    for extra in sorted(multi - set(COMMANDS.values()) - {"Telemetry"}):
        problems.append(f"{MULTI_CALL} depends on {extra}: it only dispatches to the command libraries")
    return problems


def self_test():
    """Shows that the check catches an undeclared import, an upward edge, a forbidden reach, a main that is not thin,
    a command library the multi-call executable lacks, a development command or a test double in the image and a console
    that reaches the push stack."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "Sources", "Push"))
        os.makedirs(os.path.join(root, "Sources", "Telemetry"))
        with open(os.path.join(root, "Sources", "Push", "A.swift"), "w") as handle:
            handle.write("import Foundation\n@testable import Telemetry\nlet key = \"{\\(namespace)}:push:rate\"\n")
        os.makedirs(os.path.join(root, "Sources", "WorkerCommand"))
        with open(os.path.join(root, "Sources", "WorkerCommand", "C.swift"), "w") as handle:
            handle.write("public final class InMemoryQueue {}\n// a FakeClock in a comment is fine\nstruct Faker {}\n")
        package = {"targets": [
            {"name": "Telemetry", "type": "regular", "dependencies": []},
            {"name": "Push", "type": "regular", "dependencies": []},
            {"name": "CountdownDomain", "type": "regular", "dependencies": [{"byName": ["Push", None]}]},
            {"name": "PushPayloads", "type": "regular", "dependencies": [{"byName": ["CountdownDomain", None]}]},
            {"name": "countdown", "type": "executable", "dependencies": [{"byName": ["WorkerCommand", None]}, {"byName": ["FakeFCMCommand", None]}]},
            {"name": "WorkerCommand", "type": "regular", "dependencies": []},
            {"name": "FakeFCMCommand", "type": "regular", "dependencies": []},
            {"name": "countdown-fake-fcm", "type": "executable", "dependencies": [{"byName": ["FakeFCMCommand", None]}]},
            {"name": "ConsoleCommand", "type": "regular", "dependencies": [{"byName": ["Push", None]}]},
            {"name": "countdown-worker", "type": "executable", "dependencies": [{"byName": ["WorkerCommand", None]}, {"byName": ["Push", None]}]},
            {"name": "CountdownWorker", "type": "regular", "dependencies": [{"byName": ["TestSupport", None]}]},
            {"name": "countdown-bench", "type": "executable", "dependencies": [{"byName": ["TestSupport", None]}]},
        ]}
        os.makedirs(os.path.join(root, "Sources", "CountdownFlows"))
        with open(os.path.join(root, "Sources", "CountdownFlows", "B.swift"), "w") as handle:
            handle.write("import Postgres\nlet store: StoreClient? = nil  // a StoreConnection in a comment is fine\n")
        package["targets"].append({"name": "CountdownFlows", "type": "regular", "dependencies": [{"byName": ["Postgres", None]}]})
        problems = check(package, root)
        if not any(p.startswith("CountdownFlows uses StoreClient") for p in problems) or any("StoreConnection" in p for p in problems):
            print("error: the layer check missed the flows' use of StoreClient, or read a comment as code", file=sys.stderr)
            return 1
        package["targets"].pop()
        expected = ["Push imports Telemetry", "PushPayloads (layer 3) depends on CountdownDomain", "CountdownDomain reaches Push",
                    "CountdownFlows depends on Postgres directly", "CountdownFlows imports Postgres",
                    "countdown-worker must depend on WorkerCommand only", "countdown does not depend on AdminCommand",
                    "CountdownWorker depends on TestSupport", "countdown depends on FakeFCMCommand",
                    "countdown (the production image) reaches FakeFCMCommand", "WorkerCommand declares InMemoryQueue",
                    "ConsoleCommand reaches Push", "Push spells a Redis key"]
        missing = [e for e in expected if not any(p.startswith(e) for p in problems)]
        missing += [f"(wrongly) {p}" for p in problems if p.startswith("countdown-bench depends on TestSupport")
                    or p.startswith("countdown-fake-fcm") or "FakeClock" in p or "Faker" in p]
        if missing:
            print("error: the layer check missed: " + "; ".join(missing), file=sys.stderr)
            return 1
        package["targets"][1]["dependencies"] = [{"byName": ["Telemetry", None]}]
        with open(os.path.join(root, "Sources", "Push", "A.swift"), "w") as handle:
            handle.write("import Foundation\n@testable import Telemetry\n")
        package["targets"] = package["targets"][:2]
        if check(package, root):
            print("error: the layer check complains about a sound graph", file=sys.stderr)
            return 1
    print("ok: the layer check catches an undeclared import, an upward dependency, a forbidden reach, a direct use of Postgres by "
          "the flows, a main that is not thin, a command missing from the multi-call executable, TestSupport used outside the "
          "tests and the benchmark, a development command or a test double in the production image, a console that reaches Push "
          "and a Redis key spelled outside the key catalogue")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    with open(sys.argv[1]) as handle:
        problems = check(json.load(handle))
    for problem in problems:
        print("error: " + problem, file=sys.stderr)
    if not problems:
        print("ok: every import is declared, every dependency points to a lower layer, forbidden modules out of reach")
    sys.exit(1 if problems else 0)

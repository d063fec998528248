"""A Dockerfile read as its stages and instructions (continuations joined, comments dropped)."""
import re
import shlex
from dataclasses import dataclass, field


@dataclass
class Instruction:
    keyword: str
    arguments: str
    line: int

    def exec_form(self):
        """The JSON-array form's items, or None for the shell form."""
        text = self.arguments.strip()
        if not text.startswith("["):
            return None
        import json
        try:
            items = json.loads(text)
        except ValueError:
            return None
        return items if isinstance(items, list) else None

    def flags_and_words(self):
        """`--flag=value` options and the remaining words (COPY, ADD, HEALTHCHECK, RUN)."""
        words = shlex.split(self.arguments, posix=True)
        flags = {}
        while words and words[0].startswith("--"):
            name, _, value = words.pop(0)[2:].partition("=")
            flags[name] = value
        return flags, words


@dataclass
class Stage:
    name: str
    base: str
    line: int
    instructions: list = field(default_factory=list)

    def all(self, keyword):
        return [i for i in self.instructions if i.keyword == keyword]


class Dockerfile:
    """Global ARGs (before the first FROM) and the stages in order."""

    def __init__(self, text):
        self.global_args = {}
        self.stages = []
        for instruction in _instructions(text):
            if instruction.keyword == "FROM":
                words = instruction.arguments.split()
                words = [w for w in words if not w.startswith("--")]
                name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(self.stages))
                self.stages.append(Stage(name=name, base=words[0], line=instruction.line))
            elif self.stages:
                self.stages[-1].instructions.append(instruction)
            elif instruction.keyword == "ARG":
                name, _, value = instruction.arguments.partition("=")
                self.global_args[name.strip()] = _unquote(value.strip())

    def stage(self, name):
        return next((s for s in self.stages if s.name == name), None)

    def resolved_base(self, stage):
        """The stage's base image with global ARG defaults substituted."""
        return re.sub(r"\$\{?(\w+)\}?", lambda m: self.global_args.get(m.group(1), m.group(0)), stage.base)

    def chain(self, stage):
        """The stage and the earlier stages it is built FROM, the stage first."""
        found = [stage]
        while (parent := self.stage(self.resolved_base(found[-1]))) is not None and parent not in found:
            found.append(parent)
        return found

    def root_base(self, stage):
        """The image the stage's chain of stages starts from."""
        return self.resolved_base(self.chain(stage)[-1])

    def all(self, stage, keyword):
        """The instructions of `keyword` in the stage and the stages it is built FROM, the earliest first."""
        return [i for s in reversed(self.chain(stage)) for i in s.all(keyword)]


def stage_args(stage):
    """ARG defaults declared inside a stage."""
    args = {}
    for instruction in stage.all("ARG"):
        name, _, value = instruction.arguments.partition("=")
        args[name.strip()] = _unquote(value.strip())
    return args


def apt_installed(stage):
    """Packages named by `apt-get install` in the stage's RUN instructions."""
    packages = []
    for instruction in stage.all("RUN"):
        for command in re.split(r"&&|;|\|\|", instruction.arguments):
            words = command.split()
            if "apt-get" in words and "install" in words:
                after = words[words.index("install") + 1:]
                packages += [w for w in after if not w.startswith("-") and "=" not in w[:1]]
    return packages


def _unquote(value):
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _instructions(text):
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        start = index + 1
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [line]
        while parts[-1].rstrip().endswith("\\") and index < len(lines):
            parts[-1] = parts[-1].rstrip()[:-1]
            following = lines[index]
            index += 1
            if following.lstrip().startswith("#"):
                parts.append("\\")
                continue
            parts.append(following)
        joined = " ".join(p.strip() for p in parts if p != "\\")
        keyword, _, arguments = joined.partition(" ")
        yield Instruction(keyword=keyword.upper(), arguments=arguments.strip(), line=start)

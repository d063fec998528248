"""Docker's .dockerignore matching: patterns in order, `!` re-includes, a pattern also matches everything
under a directory it matches, `**` spans directories."""
import re


class DockerIgnore:
    def __init__(self, text):
        self.rules = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            include = line.startswith("!")
            pattern = line[1:].strip() if include else line
            pattern = re.sub(r"/+", "/", pattern).strip("/")
            if pattern.startswith("./"):
                pattern = pattern[2:]
            self.rules.append((include, _regex(pattern), line))

    def excluded(self, path):
        """True when the build context leaves out `path` (relative to the context root)."""
        candidates = _self_and_parents(path.strip("/"))
        result = False
        for include, regex, _ in self.rules:
            if any(regex.fullmatch(c) for c in candidates):
                result = not include
        return result


def _self_and_parents(path):
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]


def _regex(pattern):
    out = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1:end].replace("\\", "\\\\")
                if body.startswith("^"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out))

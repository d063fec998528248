"""Compose files as docker compose reads them: variable interpolation and the merge of several files."""
import copy
import re

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class InterpolationError(ValueError):
    pass


def interpolate(value, env, required):
    """Every string in `value` with ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error},
    ${VAR:+other}, ${VAR+other}, $VAR and $$ resolved against `env`; ?-forms of unset variables become a
    placeholder and are added to `required`."""
    if isinstance(value, dict):
        return {k: interpolate(v, env, required) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env, required) for v in value]
    if isinstance(value, str):
        text, end = _expand(value, 0, env, required, closing=None)
        return text
    return value


def _expand(text, index, env, required, closing):
    out = []
    while index < len(text):
        char = text[index]
        if closing and char == closing:
            return "".join(out), index
        if char != "$":
            out.append(char)
            index += 1
            continue
        following = text[index + 1:index + 2]
        if following == "$":
            out.append("$")
            index += 2
        elif following == "{":
            name = NAME.match(text, index + 2)
            if not name:
                raise InterpolationError(f"invalid interpolation format in {text!r}")
            index = name.end()
            variable = name.group(0)
            operator = ""
            for candidate in (":-", ":?", ":+", "-", "?", "+"):
                if text.startswith(candidate, index):
                    operator = candidate
                    index += len(candidate)
                    break
            argument = ""
            if operator:
                argument, index = _expand(text, index, env, required, closing="}")
            if index >= len(text) or text[index] != "}":
                raise InterpolationError(f"unterminated ${{...}} in {text!r}")
            index += 1
            out.append(_resolve(variable, operator, argument, env, required))
        else:
            name = NAME.match(text, index + 1)
            if not name:
                raise InterpolationError(f"invalid interpolation format in {text!r} (write $$ for a literal $)")
            out.append(env.get(name.group(0), ""))
            index = name.end()
    if closing:
        raise InterpolationError(f"unterminated ${{...}} in {text!r}")
    return "".join(out), index


def _resolve(variable, operator, argument, env, required):
    value = env.get(variable)
    unset_or_empty = not value
    if operator == ":-":
        return argument if unset_or_empty else value
    if operator == "-":
        return argument if value is None else value
    if operator in (":?", "?"):
        if (operator == ":?" and unset_or_empty) or (operator == "?" and value is None):
            required.add(variable)
            return f"required-{variable.lower()}"
        return value
    if operator == ":+":
        return "" if unset_or_empty else argument
    if operator == "+":
        return "" if value is None else argument
    return value or ""


LIST_KEYS_BY_IDENTITY = {"secrets", "volumes", "ports", "expose", "cap_drop", "cap_add", "security_opt",
                         "tmpfs", "profiles", "dns"}


def merge(base, override):
    """docker compose's merge of a later file into an earlier one, for the fields this project uses:
    mappings merge key by key, listed fields (secrets, volumes, ports, ...) append without duplicates,
    command/entrypoint and scalars replace."""
    result = copy.deepcopy(base)
    for key, value in override.items():
        if key in result and isinstance(result[key], dict) and isinstance(value, dict):
            result[key] = merge(result[key], value)
        elif key in LIST_KEYS_BY_IDENTITY and isinstance(result.get(key), list) and isinstance(value, list):
            result[key] = result[key] + [v for v in value if v not in result[key]]
        else:
            result[key] = copy.deepcopy(value)
    return result


def environment(service):
    """A service's environment as a mapping (compose allows a list of NAME=value too)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        return dict(item.split("=", 1) if "=" in item else (item, None) for item in env)
    return {k: ("" if v is None else str(v)) for k, v in env.items()}


def duration_seconds(text):
    """Seconds of a compose duration such as 35s, 1m30s, 1h."""
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)", str(text)):
        total += float(number) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}[unit]
    return total

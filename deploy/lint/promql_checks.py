"""PromQL of the dashboard, the alert rules and the adapter rules: it parses, and every metric and label it
names is one the worker exports."""
import re

import promql_parser

from metrics_catalog import TARGET_LABELS

GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "${__range}": "1h",
                     "$__range_s": "3600", "$__interval_ms": "60000"}
ADAPTER_TEMPLATES = {"<<.LabelMatchers>>": 'namespace="countdown"', "<<.GroupBy>>": "namespace"}


def grafana_to_promql(expr):
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return re.sub(r"\$\{?\w+\}?", "x", expr)


def adapter_to_promql(expr, series):
    for template, value in ADAPTER_TEMPLATES.items():
        expr = expr.replace(template, value)
    return expr.replace("<<.Series>>", series).replace("{,", "{")


def check_expression(expr, catalog, where, report):
    """Parses `expr` and checks its metric names and label names against the catalog; returns the metric
    names it uses."""
    try:
        tree = promql_parser.parse(expr)
    except ValueError as error:
        report.error(where, f"PromQL does not parse: {error}: {expr}")
        return set()
    used = set()
    selector_labels = []
    grouping_labels = []

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector):
            name = node.name or _name_matcher(node)
            if name:
                used.add(name)
                matchers = [m.name for m in _matchers(node) if m.name != "__name__"]
                selector_labels.append((name, matchers))
        elif isinstance(node, promql_parser.AggregateExpr) and node.modifier is not None:
            grouping_labels.extend(_modifier_labels(node.modifier))
        elif isinstance(node, promql_parser.BinaryExpr) and node.modifier is not None:
            matching = getattr(node.modifier, "matching", None)
            if matching is not None:
                grouping_labels.extend(_modifier_labels(matching))
            grouping_labels.extend(getattr(node.modifier, "group_labels", None) or [])
        return True

    promql_parser.walk(tree, visit)
    known_anywhere = set(TARGET_LABELS) | {"le"}
    for name in sorted(used):
        labels = catalog.labels(name)
        if labels is None:
            report.error(where, f"{name} is not a metric the worker exports ({catalog.source})")
        else:
            known_anywhere |= labels
    for name, matchers in selector_labels:
        labels = catalog.labels(name)
        if labels is None:
            continue
        for label in matchers:
            if label not in labels | TARGET_LABELS:
                report.error(where, f"{name} has no label '{label}' (it has {sorted(labels) or 'none'})")
    for label in grouping_labels:
        if label not in known_anywhere:
            report.error(where, f"groups by '{label}', which none of its metrics carries")
    return used


def _matchers(selector):
    matchers = selector.matchers
    inner = getattr(matchers, "matchers", matchers)
    return list(inner or [])


def _name_matcher(selector):
    return next((m.value for m in _matchers(selector) if m.name == "__name__"), None)


def _modifier_labels(modifier):
    return list(getattr(modifier, "labels", None) or [])


def check_grouped_by(expr, label, where, report):
    """Every aggregation in `expr` keeps `label` (`by (..., label)`), so that one Prometheus watching several
    deployments evaluates each on its own; `absent()` (no labels at all) is allowed as the last resort."""
    try:
        tree = promql_parser.parse(expr)
    except ValueError:
        return  # reported by check_expression

    def visit(node):
        if isinstance(node, promql_parser.AggregateExpr):
            modifier = node.modifier
            labels = _modifier_labels(modifier) if modifier is not None else []
            without = modifier is not None and "without" in str(getattr(modifier, "type", "")).lower()
            if without and label in labels or not without and label not in labels:
                report.error(where, f"aggregates without keeping '{label}': use by ({label}, ...)")
        return True

    promql_parser.walk(tree, visit)

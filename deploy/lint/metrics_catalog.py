"""The metrics a worker exports: from deploy/metrics.txt, or from a real scrape (Prometheus text format)."""
import re

LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s*$")
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[^\"}]|\"(?:[^\"\\]|\\.)*\")*\})?\s+\S+")
LABEL_NAME = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*=")
# Labels that Prometheus itself attaches to every scraped series (compose and Kubernetes service discovery).
TARGET_LABELS = {"job", "instance", "namespace", "pod", "service", "endpoint", "container", "environment"}
# Series Prometheus itself writes for every target (rules may use them; no scrape contains them).
SYNTHETIC = {"up": set()}


class Catalog:
    """Metric name -> the label names it carries."""

    def __init__(self, metrics, source):
        self.metrics = metrics
        self.source = source

    @classmethod
    def from_list(cls, path):
        metrics = {}
        for number, raw in enumerate(path.read_text().splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            match = LINE.match(line)
            if not match:
                raise ValueError(f"{path}:{number}: expected name or name{{label,...}}, got {line!r}")
            labels = {label.strip() for label in (match.group(2) or "").split(",") if label.strip()}
            metrics[match.group(1)] = labels
        return cls(metrics, str(path))

    @classmethod
    def from_scrape(cls, path):
        metrics = {}
        for raw in path.read_text().splitlines():
            if not raw.strip() or raw.startswith("#"):
                continue
            match = SAMPLE.match(raw)
            if not match:
                raise ValueError(f"{path}: not a Prometheus text format sample: {raw!r}")
            labels = set(LABEL_NAME.findall(match.group(2) or ""))
            metrics.setdefault(match.group(1), set()).update(labels)
        return cls(metrics, str(path))

    def merged(self, other):
        """This catalog plus `other`'s series (for series from outside Countdown: deploy/metrics-external.txt)."""
        metrics = {name: set(labels) for name, labels in self.metrics.items()}
        for name, labels in other.metrics.items():
            metrics.setdefault(name, set()).update(labels)
        return Catalog(metrics, f"{self.source} and {other.source}")

    def labels(self, name):
        return self.metrics.get(name, SYNTHETIC.get(name))

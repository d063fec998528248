"""Collects findings of the deployment lint: errors fail the run, warnings and notes are printed."""
import sys


class Report:
    """One finding list for the whole run, grouped by section as the checks go."""

    def __init__(self):
        self.errors = []
        self.warnings = []
        self.section = ""
        self.passed = []

    def begin(self, section):
        self.section = section
        self._errors_before = len(self.errors)

    def end(self, detail=""):
        failed = len(self.errors) - self._errors_before
        if failed:
            print(f"FAIL {self.section}: {failed} error(s)")
        else:
            self.passed.append(self.section)
            print(f"ok   {self.section}" + (f" ({detail})" if detail else ""))
        sys.stdout.flush()

    def error(self, where, message):
        self.errors.append(f"{where}: {message}")
        print(f"  error: {where}: {message}")

    def warn(self, where, message):
        """Printed once per message, at the first place it applies to."""
        if any(w.endswith(f": {message}") for w in self.warnings):
            return
        self.warnings.append(f"{where}: {message}")
        print(f"  warning: {where}: {message}")

    def note(self, message):
        print(f"  note: {message}")

    def summary(self):
        print(f"lint-deploy: {len(self.passed)} sections ok, {len(self.errors)} error(s), "
              f"{len(self.warnings)} warning(s)")
        return 1 if self.errors else 0

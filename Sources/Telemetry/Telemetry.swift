// Telemetry: work in progress.

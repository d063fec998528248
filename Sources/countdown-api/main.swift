// countdown-api: work in progress.

// Redis: work in progress.

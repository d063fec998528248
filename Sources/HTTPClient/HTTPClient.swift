// HTTPClient: work in progress.

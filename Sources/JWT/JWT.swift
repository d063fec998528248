// JWT: work in progress.

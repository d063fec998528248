// Push: work in progress.

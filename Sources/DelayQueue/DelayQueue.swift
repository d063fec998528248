// DelayQueue: work in progress.

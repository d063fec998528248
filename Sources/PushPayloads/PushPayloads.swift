// PushPayloads: work in progress.

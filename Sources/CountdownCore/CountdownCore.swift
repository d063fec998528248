// CountdownCore: work in progress.

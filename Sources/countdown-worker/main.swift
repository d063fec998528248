import WorkerCommand

// countdown-worker for development and tests; the image runs the same code through the multi-call `countdown`.
await WorkerMain.run(arguments: CommandLine.arguments)

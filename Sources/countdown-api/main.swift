import APICommand

// countdown-api for development and tests; the image runs the same code through the multi-call `countdown`.
await APIMain.run(arguments: CommandLine.arguments)

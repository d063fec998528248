import ConsoleCommand

// countdown-console for development and tests; the image runs the same code through the multi-call `countdown`.
await ConsoleMain.run(arguments: CommandLine.arguments)

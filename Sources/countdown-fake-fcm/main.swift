import FakeFCMCommand

// countdown-fake-fcm for development and tests; the image runs the same code through the multi-call `countdown`.
await FakeFCMMain.run(arguments: CommandLine.arguments)

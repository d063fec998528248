import AdminCommand

// countdown-admin for development and tests; the image runs the same code through the multi-call `countdown`.
await AdminMain.run(arguments: CommandLine.arguments)

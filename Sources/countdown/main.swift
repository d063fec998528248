import AdminCommand
import APICommand
import ConsoleCommand
import Foundation
import Telemetry
import WorkerCommand

// countdown: the image's one executable. Holds every production command once (and Foundation's ICU data once,
// instead of one copy per executable); the image links countdown-worker, countdown-admin, countdown-api and
// countdown-console to it, and each behaves exactly as the executable of that name (--version, exit codes, logs).
// The fake FCM and the benchmark are development executables of their own, outside the production image.

switch MultiCall.resolve(CommandLine.arguments) {
case .run(let program, let arguments):
    switch program {
    case "countdown-worker": await WorkerMain.run(arguments: arguments)
    case "countdown-admin": await AdminMain.run(arguments: arguments)
    case "countdown-api": await APIMain.run(arguments: arguments)
    case "countdown-console": await ConsoleMain.run(arguments: arguments)
    default:
        FileHandle.standardError.write(Data("countdown: \(program) is listed in MultiCall.commands but has no entry point\n".utf8))
        exit(70)
    }
case .version:
    print(BuildInfo.versionLine(program: "countdown"))
    exit(0)
case .help:
    print(MultiCall.usage)
    exit(0)
case .usage(let problem):
    FileHandle.standardError.write(Data("countdown: \(problem)\n\(MultiCall.usage)\n".utf8))
    exit(2)
}

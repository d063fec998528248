import Foundation
import Telemetry
import HTTPServer
import JWT

// countdown-fake-fcm: a local stand-in for FCM HTTP v1 (see FakeOptions.usage); `countdown-fake-fcm apns`: one for
// APNs (see FakeAPNsOptions.usage).

/// `countdown-fake-fcm`, run by the `countdown-fake-fcm` executable and by the multi-call `countdown`.
public enum FakeFCMMain {
    /// Serves until SIGTERM / SIGINT, writes its records and exits the process. `arguments`: the program name, then its flags.
    /// On the main actor (the main thread), as the executable's top-level code was: a signal mask set here is inherited
    /// by every thread started later, so SIGTERM reaches `sigwait` instead of ending the process.
    @MainActor public static func run(arguments: [String]) async -> Never {
        let stopSignals = FakeServer.blockStopSignals()
        BuildInfo.answerVersionFlag(program: "countdown-fake-fcm", arguments: arguments)
        if arguments.dropFirst().first == "apns" {
            FakeAPNsMain.run(arguments: Array(arguments.dropFirst(2)), stopSignals: stopSignals)
        }

        let options: FakeOptions
        let fake: FakeFCM
        let recordFile: RecordFile?
        do throws(UsageError) {
            guard let parsed = try FakeOptions.parse(arguments: Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment) else {
                print(FakeOptions.usage)
                exit(0)
            }
            options = parsed
            let log = FakeLog(minimum: options.logLevel)
            let account: ServiceAccount
            do { account = try ServiceAccount.load(file: options.serviceAccountPath ?? "") } catch { throw UsageError("service account: \(error)") }
            recordFile = try options.recordPath.map { path throws(UsageError) in
                try RecordFile(path: path, log: log, flushMilliseconds: options.recordFlushMilliseconds)
            }
            fake = try FakeFCM(account: account, tokenLifetime: options.tokenLifetime, keep: options.keep, keepRequests: options.keepRequests, recordFile: recordFile, log: log)
        } catch {
            FakeServer.fail("countdown-fake-fcm", error.description, code: 2)
        }

        FakeServer.serve(
            program: "countdown-fake-fcm", address: options.address, listenDescriptor: options.listenDescriptor, threads: options.threads,
            stopSignals: stopSignals, listening: ["project": fake.account.projectID, "tokenPaths": fake.tokenPaths.sorted()], log: fake.log,
            logFields: ["project": fake.account.projectID, "tokenTTL": String(options.tokenLifetime), "record": options.recordPath ?? ""],
            handler: { [fake] request, answer in fake.respond(to: request, with: answer) },
            stopping: { recordFile?.flush() })
    }
}

import Foundation
import Telemetry

// countdown-fake-fcm: a local stand-in for FCM HTTP v1 (see FakeOptions.fcmUsage); `countdown-fake-fcm apns`: one
// for APNs (see FakeOptions.apnsUsage).

/// `countdown-fake-fcm`, run by the `countdown-fake-fcm` executable.
public enum FakeFCMMain {
    /// Serves until SIGTERM / SIGINT, writes its records and exits the process. `arguments`: the program name, then its
    /// flags (`apns` first for the fake APNs). On the main actor (the main thread), as the executable's top-level
    /// code was: a signal mask set here is inherited by every thread started later, so SIGTERM reaches `sigwait`
    /// instead of ending the process.
    @MainActor public static func run(arguments: [String]) async -> Never {
        let stopSignals = FakeServer.blockStopSignals()
        BuildInfo.answerVersionFlag(program: "countdown-fake-fcm", arguments: arguments)
        let service: FakeService = arguments.dropFirst().first == "apns" ? .apns : .fcm
        let options: FakeOptions
        let log: FakeLog
        let recordFile: RecordFile?
        let served: FakeServer.Served
        do throws(UsageError) {
            let flags = Array(arguments.dropFirst(service == .apns ? 2 : 1))
            guard let parsed = try FakeOptions.parse(service, arguments: flags, environment: ProcessInfo.processInfo.environment) else {
                print(FakeOptions.usage(service))
                exit(0)
            }
            options = parsed
            log = FakeLog(minimum: options.logLevel, service: service == .fcm ? "countdown-fake-fcm" : "countdown-fake-apns")
            recordFile = try options.recordPath.map { path throws(UsageError) in
                try RecordFile(path: path, log: log, flushMilliseconds: options.recordFlushMilliseconds)
            }
            served = try service == .fcm
                ? FakeFCM.served(options, log: log, recordFile: recordFile) : FakeAPNs.served(options, log: log, recordFile: recordFile)
        } catch {
            FakeServer.fail(service.program, error.description, code: 2)
        }
        FakeServer.serve(served, program: service.program, options: options, stopSignals: stopSignals, log: log) { recordFile?.flush() }
    }
}

import Foundation
import Telemetry
import HTTPServer
import JWT
#if canImport(Glibc)
import Glibc
#endif

// countdown-fake-fcm: a local stand-in for FCM HTTP v1 (see FakeOptions.usage).

/// `countdown-fake-fcm`, run by the `countdown-fake-fcm` executable and by the multi-call `countdown`.
public enum FakeFCMMain {
    /// Serves until SIGTERM / SIGINT, writes its records and exits the process. `arguments`: the program name, then its flags.
    /// On the main actor (the main thread), as the executable's top-level code was: a signal mask set here is inherited
    /// by every thread started later, so SIGTERM reaches `sigwait` instead of ending the process.
    @MainActor public static func run(arguments: [String]) async -> Never {
        // SIGINT / SIGTERM are taken by sigwait below. Block them first, before anything starts a thread (the fake's
        // latency line, the record flusher, the server's threads), so every thread inherits the block: a thread without
        // it could take a SIGTERM and end the process before it says "stopping" and writes its records.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        BuildInfo.answerVersionFlag(program: "countdown-fake-fcm", arguments: arguments)

        func fail(_ message: String, code: Int32) -> Never {
            FileHandle.standardError.write(Data("countdown-fake-fcm: \(message)\n".utf8))
            exit(code)
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
            fail(error.description, code: 2)
        }

        var configuration = HTTPServerConfiguration(
            address: options.address, threads: options.threads, maxBodyBytes: 1 << 20, connectionTimeout: .seconds(60), connectionLimit: 8192)
        configuration.listeningDescriptor = options.listenDescriptor
        let server = HTTPServer(configuration: configuration, deferringHandler: { [fake] request, answer in fake.respond(to: request, with: answer) })
        do {
            try server.start()
        } catch {
            fail("\(error)", code: 1)
        }

        let port = server.boundPort ?? 0
        let listening: [String: Any] = [
            "event": "listening", "port": port, "address": server.boundAddress ?? "", "project": fake.account.projectID,
            "tokenPaths": fake.tokenPaths.sorted(),
        ]
        if let line = try? JSONSerialization.data(withJSONObject: listening, options: [.sortedKeys, .withoutEscapingSlashes]) {
            FileHandle.standardOutput.write(line + Data("\n".utf8))
        }
        fake.log.info("listening", [
            "address": server.boundAddress ?? "", "project": fake.account.projectID, "tokenTTL": String(options.tokenLifetime),
            "record": options.recordPath ?? "", "version": BuildInfo.version,
        ])

        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        fake.log.info("stopping", ["signal": String(received)])
        server.stop()
        recordFile?.flush()
        exit(0)
    }
}

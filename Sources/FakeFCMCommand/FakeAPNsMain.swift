import Foundation
import JWT
#if canImport(Glibc)
import Glibc
#endif

/// `countdown-fake-fcm apns`: the fake APNs (see `FakeAPNsOptions.usage`).
enum FakeAPNsMain {
    /// Serves until SIGTERM / SIGINT and exits. `arguments`: the flags after `apns`.
    static func run(arguments: [String], stopSignals: sigset_t) -> Never {
        let program = "countdown-fake-fcm apns"
        let options: FakeAPNsOptions
        let fake: FakeAPNs
        let recordFile: RecordFile?
        do throws(UsageError) {
            guard let parsed = try FakeAPNsOptions.parse(arguments: arguments, environment: ProcessInfo.processInfo.environment) else {
                print(FakeAPNsOptions.usage)
                exit(0)
            }
            options = parsed
            let log = FakeLog(minimum: options.logLevel, service: "countdown-fake-apns")
            let key: AsymmetricKey
            do {
                key = try (try? AsymmetricKey.privateKey(file: options.keyFile)) ?? AsymmetricKey.publicKey(file: options.keyFile)
            } catch {
                throw UsageError("--key \(options.keyFile): \(error)")
            }
            let tokens = try ProviderTokenChecker(key: key, keyID: options.keyID, teamID: options.teamID, now: { Date() })
            recordFile = try options.recordPath.map { path throws(UsageError) in try RecordFile(path: path, log: log) }
            var configured = FakeAPNs(
                bundleID: options.bundleID, tokens: tokens, channelLimit: options.maxChannels, keep: options.keep,
                keepRequests: options.keepRequests, recordFile: recordFile, log: log)
            configured.channelHost = options.channelHost
            fake = configured
        } catch {
            FakeServer.fail(program, error.description, code: 2)
        }
        FakeServer.serve(
            program: program, address: options.address, listenDescriptor: options.listenDescriptor, threads: options.threads,
            stopSignals: stopSignals, listening: ["bundleId": options.bundleID, "protocol": "apns"], log: fake.log,
            logFields: ["bundleId": options.bundleID, "keyId": options.keyID, "record": options.recordPath ?? ""],
            handler: { [fake] request, answer in fake.respond(to: request, with: answer) },
            stopping: { recordFile?.flush() })
    }
}

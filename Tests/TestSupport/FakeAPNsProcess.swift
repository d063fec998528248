import Foundation

/// The fake APNs as a test uses it: `countdown-fake-fcm apns` (HTTP/1.1 on a loopback port) behind `nghttpx`, which
/// terminates TLS and HTTP/2 with a certificate of a throwaway CA, on two ports: `baseURL` (token pushes and
/// broadcasts, as api.push.apple.com) and `channelURL` (channel management, as Apple's separate host; each answers
/// only its own requests, others get 404 `BadPath`). A worker trusts
/// it through `APNS_CA_FILE` = `caFile`. The fake's control routes (`/fake/…`) answer on `controlURL`, plain HTTP.
/// Child output goes to files in `directory`; both processes stop on `deinit`.
public final class FakeAPNsProcess: @unchecked Sendable {
    public let directory: String
    public let fake: SpawnedProcess
    public let proxy: SpawnedProcess
    /// The `.p8` signing key (`APNS_KEY_FILE`) and its ids.
    public let keyFile: String
    public let keyID: String
    public let teamID: String
    public let bundleID: String
    /// The fake's own port (HTTP/1.1) and the TLS ports of nghttpx.
    public let backendPort: Int
    public let pushPort: Int
    public let channelPort: Int

    public var baseURL: String { "https://localhost:\(pushPort)" }
    public var channelURL: String { "https://localhost:\(channelPort)" }
    public var controlURL: String { "http://127.0.0.1:\(backendPort)" }
    /// The throwaway CA that signed nghttpx's certificate (`APNS_CA_FILE`).
    public var caFile: String { "\(directory)/ca.crt" }
    public var stderrPath: String { "\(directory)/fake.stderr.log" }
    public var proxyLogPath: String { "\(directory)/nghttpx.log" }

    /// A control client for `/fake/messages`, `/fake/requests`, `/fake/faults`, `/fake/channels`, `/fake/stats`.
    public var control: FakeFCMClient { FakeFCMClient(baseURL: controlURL) }

    /// The variables a worker needs to push through this fake (`PUSH_TRANSPORT=apns`).
    public var workerEnvironment: [String: String] {
        [
            "PUSH_TRANSPORT": "apns", "APNS_KEY_FILE": keyFile, "APNS_KEY_ID": keyID, "APNS_TEAM_ID": teamID,
            "APNS_BUNDLE_ID": bundleID, "APNS_BASE_URL": baseURL, "APNS_CHANNEL_URL": channelURL, "APNS_CA_FILE": caFile,
        ]
    }

    /// The key, CA and server certificate come from `scripts/gen-apns-pki`.
    /// - Parameters:
    ///   - arguments: extra flags of the fake (`--max-channels 2`, `--record <file>`).
    ///   - bundleID: `APNS_BUNDLE_ID`.
    ///   - logLevel: the fake's `LOG_LEVEL` (`debug` logs every request).
    ///   - directory: where logs, keys and certificates go; nil: a new directory in the scratch directory.
    public init(arguments: [String] = [], bundleID: String = "com.example.countdown", logLevel: String? = nil, directory: String? = nil) async throws {
        let directory = directory ?? (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("fakeapns"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.bundleID = bundleID
        keyID = "FAKEKEY123"
        teamID = "FAKETEAM12"
        keyFile = "\(directory)/AuthKey_\(keyID).p8"
        _ = try runCommand("/bin/bash", [FakeFCMProcess.repositoryRoot.appendingPathComponent("scripts/gen-apns-pki").path, directory, keyID])

        // nghttpx cannot be handed a bound socket: it binds free ports itself (a rare race with another process is
        // reported as a start failure). The fake learns the channel port first, to answer channel management there only.
        let pushPort = freeLoopbackPort()
        var channelPort = freeLoopbackPort()
        while channelPort == pushPort { channelPort = freeLoopbackPort() }
        (self.pushPort, self.channelPort) = (pushPort, channelPort)
        var environment = ProcessInfo.processInfo.environment
        environment["LOG_LEVEL"] = logLevel
        let stdoutPath = "\(directory)/fake.stdout.log"
        fake = try SpawnedProcess(
            TestEnvironment.systemBinDirectory.appendingPathComponent("countdown-fake-fcm").path,
            ["apns", "--key", keyFile, "--key-id", keyID, "--team-id", teamID, "--bundle-id", bundleID, "--addr", "127.0.0.1:0",
             "--channel-host", "localhost:\(channelPort)"] + arguments,
            environment: environment, stdout: .file(stdoutPath), stderr: .file("\(directory)/fake.stderr.log"))
        let (object, line) = readAnnouncement(of: fake, stdoutPath: stdoutPath)
        guard let announcement = object, announcement["event"] as? String == "listening", let port = announcement["port"] as? Int else {
            throw FakeAPNsStartFailed(output: line + ((try? String(contentsOfFile: "\(directory)/fake.stderr.log", encoding: .utf8)) ?? ""))
        }
        backendPort = port

        let log = "\(directory)/nghttpx.log"
        proxy = try SpawnedProcess(
            "/usr/sbin/nghttpx",
            ["--conf=/dev/null", "--frontend=127.0.0.1,\(pushPort)", "--frontend=127.0.0.1,\(channelPort)",
             "--backend=127.0.0.1,\(port)", "--single-process", "--no-ocsp", "--workers=1", "--no-via", "--backend-connections-per-host=64",
             "--errorlog-file=\(log)", "\(directory)/server.key", "\(directory)/server.crt"],
            stdout: .file("\(directory)/nghttpx.stdout.log"), stderr: .file("\(directory)/nghttpx.stderr.log"))
        let proxy = self.proxy
        let ports = [pushPort, channelPort]
        try await waitUntil(timeout: .seconds(20), "nghttpx to listen on \(ports)") {
            guard proxy.isRunning else { throw FakeAPNsStartFailed(output: "nghttpx exited: " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")) }
            return ports.allSatisfy { port in
                guard let socket = try? RawSocket(port: port) else { return false }
                socket.close()
                return true
            }
        }
    }

    deinit { stop() }

    /// Stops nghttpx, then the fake (SIGTERM, SIGKILL after 10 s); returns the fake's exit status.
    @discardableResult
    public func stop() -> Int32 {
        _ = proxy.stop(grace: .seconds(5))
        return fake.stop(grace: .seconds(10))
    }

    /// What the fake logged so far.
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}

public struct FakeAPNsStartFailed: Error, CustomStringConvertible {
    public let output: String
    public var description: String { "the fake APNs did not start: \(output)" }
}

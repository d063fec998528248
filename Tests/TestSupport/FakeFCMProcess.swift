import Foundation
import Synchronization

/// A `countdown-fake-fcm` child process with a fresh service account, stopped on `deinit`.
public final class FakeFCMProcess: @unchecked Sendable {
    public let process: SpawnedProcess
    public let directory: String
    public let accountPath: String
    public let account: [String: String]
    public let port: Int
    public let listening: [String: Any]
    public let stderrPath: String

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var project: String { account["project_id"]! }

    /// - Parameters:
    ///   - tokenURI: written into the account; the fake serves its path and checks assertions' `aud` against it.
    ///   - address: where the fake listens (`127.0.0.1:0` picks a port).
    ///   - arguments: extra flags (`--token-ttl 1`, `--record <file>`).
    ///   - accountFile: writes the service account for a token URI and returns its path (its `token_uri` must be
    ///     that URI); nil generates one with `scripts/gen-service-account`.
    ///   - program: the built executable and the arguments before the flags.
    ///   - listener: a socket this process bound and listens on at `address`, which the fake serves (`--listen-fd`).
    ///   - logLevel: the fake's `LOG_LEVEL` (`debug` logs every send it answers); nil: its default.
    ///   - directory: where its logs go (created if missing); nil: a new directory in the scratch directory.
    public init(
        tokenURI: String = "http://127.0.0.1:1/oauth2/v4/token", address: String = "127.0.0.1:0", arguments: [String] = [],
        accountFile: ((_ tokenURI: String) throws -> String)? = nil, program: [String] = ["countdown-fake-fcm"], listener: Int32? = nil,
        logLevel: String? = nil, directory: String? = nil
    ) throws {
        self.directory = directory ?? (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("fakefcm"))
        let directory = self.directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        accountPath = try accountFile?(tokenURI) ?? Self.sharedAccounts.withLock { accounts in
            if let path = accounts[tokenURI] { return path }
            let path = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("account") + ".json")
            try runCommand("/bin/bash", [Self.repositoryRoot.appendingPathComponent("scripts/gen-service-account").path, path, tokenURI])
            accounts[tokenURI] = path
            return path
        }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: accountPath))) as! [String: Any]
        account = json.compactMapValues { $0 as? String }

        stderrPath = "\(directory)/stderr.log"
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else { throw FakeStartFailed(output: "cannot create \(stderrPath)") }
        var environment = ProcessInfo.processInfo.environment
        environment["LOG_LEVEL"] = logLevel
        let stdoutPath = "\(directory)/stdout.log"
        process = try SpawnedProcess(
            TestEnvironment.systemBinDirectory.appendingPathComponent(program[0]).path,
            Array(program.dropFirst()) + ["--service-account", accountPath, "--addr", address] + (listener == nil ? [] : ["--listen-fd", "3"])
                + arguments,
            environment: environment, stdout: .file(stdoutPath), stderr: .file(stderrPath), descriptor3: listener)
        let (object, line) = readAnnouncement(of: process, stdoutPath: stdoutPath)
        guard let announcement = object, announcement["event"] as? String == "listening", let port = announcement["port"] as? Int else {
            let log = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            throw FakeStartFailed(output: line + log)
        }
        self.port = port
        listening = announcement
    }

    /// A fake whose account's `token_uri` points at the fake itself, so a real FCM client can use it end to end.
    /// The account must name the port before the fake starts: this process binds it and hands the listening socket
    /// to the fake, so no other process can take the port in between.
    public static func reachable(
        arguments: [String] = [], accountFile: ((_ tokenURI: String) throws -> String)? = nil, logLevel: String? = nil, directory: String? = nil
    ) throws -> FakeFCMProcess {
        let listener = try LoopbackListener()
        let address = "127.0.0.1:\(listener.port)"
        return try withExtendedLifetime(listener) {
            try FakeFCMProcess(tokenURI: "http://\(address)/token", address: address, arguments: arguments, accountFile: accountFile,
                               listener: listener.descriptor, logLevel: logLevel, directory: directory)
        }
    }

    deinit { stop() }

    /// Sends SIGTERM and waits for the exit (SIGKILL after 10 s); returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        process.stop(grace: .seconds(10))
    }

    /// What the fake logged so far.
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// One generated account per token URI for the whole run (RSA key generation is the slow part).
    private static let sharedAccounts = Mutex<[String: String]>([:])

    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

public struct FakeStartFailed: Error, CustomStringConvertible {
    public let output: String
    public var description: String { "countdown-fake-fcm did not start: \(output)" }
}

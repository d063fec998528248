import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One running `countdown-worker` process of a `CountdownSystem`; its log (JSON lines) goes to a file.
public final class SystemWorker: @unchecked Sendable {
    /// libfaketime's preload library, for a worker whose clock runs ahead (`clockOffset`).
    public static let fakeTimeLibrary = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

    public let process: SpawnedProcess
    /// Its number in the system: 0, 1, ... in start order, retired workers included.
    public let index: Int
    public let logPath: String
    public let startedAt: Date
    private let address = Mutex<String?>(nil)

    /// Starts `executable` with `environment`; `clockOffset` (libfaketime's `FAKETIME`, e.g. `"+600s"`) runs its
    /// wall clock that far off (monotonic time stays real).
    public init(executable: String, environment: [String: String], index: Int, logPath: String, clockOffset: String? = nil) throws {
        var environment = environment
        if let clockOffset {
            guard FileManager.default.fileExists(atPath: Self.fakeTimeLibrary) else {
                throw CommandFailed(command: executable, status: -1, output: "\(Self.fakeTimeLibrary) is missing (apt-get install libfaketime)")
            }
            environment.merge([
                "LD_PRELOAD": Self.fakeTimeLibrary, "FAKETIME": clockOffset, "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1",
            ]) { $1 }
        }
        self.index = index
        self.logPath = logPath
        startedAt = Date()
        process = try SpawnedProcess(executable, environment: environment, stdout: .file(logPath), stderr: .file(logPath))
    }

    /// A test that fails before stopping its system still leaves no worker behind (SpawnedProcess kills it).
    public var pid: Int32 { process.pid }
    public var isRunning: Bool { process.isRunning }
    /// The exit status once it exited (its code, or the signal that ended it).
    public var exitStatus: Int32? { process.exitStatus }
    /// Everything it logged so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    public func terminate() { process.signal(SIGTERM) }

    /// SIGKILL, then waits (up to 10 s) until it is reaped.
    public func kill9() {
        process.signal(SIGKILL)
        _ = process.waitBlocking(deadline: Date().addingTimeInterval(10))
    }

    /// Waits for the exit; returns the exit status, or nil if still running after `timeout` seconds (then kills it).
    @discardableResult
    public func waitForExit(timeout: TimeInterval) async -> Int32? {
        await process.exitStatus(within: .milliseconds(Int(timeout * 1000)))
    }

    /// The log's JSON lines as objects (lines that are not JSON objects are skipped).
    public func logLines() -> [[String: Any]] {
        log.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// The worker id it announced in its "worker starting" line; waits up to `timeout` for the line.
    public func workerID(timeout: Duration = .seconds(30)) async throws -> String {
        var id = ""
        try await waitUntil(timeout: timeout, every: .milliseconds(50), "worker \(index) to log \"worker starting\" (\(logPath))") {
            id = self.logLines().first { $0["msg"] as? String == "worker starting" }?["worker"] as? String ?? ""
            return !id.isEmpty
        }
        return id
    }

    /// host:port of its health and metrics server, from its "serving health and metrics" line (HTTP_ADDR may say
    /// port 0); nil until it logged the line.
    public func metricsAddress() -> String? {
        if let known = address.withLock({ $0 }) { return known }
        let found = logLines().first { $0["msg"] as? String == "serving health and metrics" }?["address"] as? String
        if let found { address.withLock { $0 = found } }
        return found
    }

    /// Its `/metrics` as `"name{labels}" -> value`; empty when it cannot be reached.
    public func metrics() async -> [String: Double] {
        guard let address = metricsAddress(), let url = URL(string: "http://\(address)/metrics") else { return [:] }
        var request = URLRequest(url: url)
        request.timeoutInterval = 5
        guard let (data, _) = try? await URLSession.shared.data(for: request) else { return [:] }
        return Self.parseMetrics(String(decoding: data, as: UTF8.self))
    }

    /// Prometheus text format as `"name{labels}" -> value` (comments and unparsable lines skipped).
    public static func parseMetrics(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }

    /// CPU, memory and context switches of the process now; nil once it is gone.
    public func usage() -> ProcessUsage? { ProcessUsage.of(pid: pid) }
}

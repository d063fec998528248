import Foundation
import TestSupport

/// One running `countdown-worker` process; its log goes to a file in the test's scratch directory.
final class WorkerHandle: @unchecked Sendable {
    let process: SpawnedProcess
    let logPath: String

    init(environment: [String: String], index: Int) throws {
        logPath = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("worker\(index)") + ".log")
        process = try SpawnedProcess(
            TestEnvironment.productsDirectory.appendingPathComponent("countdown-worker").path,
            environment: environment, stdout: .file(logPath), stderr: .file(logPath))
    }

    /// A test that fails before stopping its system still leaves no worker behind (SpawnedProcess kills it).
    var pid: Int32 { process.pid }
    var isRunning: Bool { process.isRunning }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func terminate() { process.signal(SIGTERM) }

    func kill9() { process.signal(SIGKILL) }

    /// Waits for the exit; returns the exit status, or nil if still running after `timeout` seconds (then kills it).
    @discardableResult
    func waitForExit(timeout: TimeInterval) async -> Int32? {
        await process.exitStatus(within: .milliseconds(Int(timeout * 1000)))
    }
}

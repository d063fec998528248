import Foundation
import TestSupport

/// One running `countdown-worker` process; its log goes to a file in the test's scratch directory.
final class WorkerHandle: @unchecked Sendable {
    let process = Process()
    let logPath: String

    init(environment: [String: String], index: Int) throws {
        logPath = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("worker\(index)") + ".log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = TestEnvironment.productsDirectory.appendingPathComponent("countdown-worker")
        process.environment = environment
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    /// A test that fails before stopping its system still leaves no worker behind.
    deinit { kill9() }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func terminate() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
    }

    func kill9() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits for the exit; returns the exit status, or nil if still running after `timeout` seconds (then kills it).
    @discardableResult
    func waitForExit(timeout: TimeInterval) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            kill9()
            while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            return nil
        }
        return process.terminationStatus
    }
}

import Foundation

/// Runs a command to completion and returns its combined output; throws when it exits non-zero.
@discardableResult
public func runCommand(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let output = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
        throw CommandFailed(command: ([executable] + arguments).joined(separator: " "), status: process.terminationStatus, output: output)
    }
    return output
}

/// A command that exited non-zero, with what it printed.
public struct CommandFailed: Error, CustomStringConvertible {
    public let command: String
    public let status: Int32
    public let output: String
    public var description: String { "`\(command)` exited \(status): \(output)" }
}

/// Polls `condition` until it holds or `timeout` passes; the test fails with `message` on timeout.
public func waitUntil(
    timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20), _ message: @autoclosure () -> String = "condition",
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: interval)
    }
    if try await condition() { return }
    throw WaitTimedOut(what: message(), timeout: timeout)
}

/// `waitUntil` gave up.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let timeout: Duration
    public var description: String { "timed out after \(timeout) waiting for \(what)" }
}

/// Runs blocking work (waiting for a child process, reading its pipe) on a thread of its own, so it never
/// occupies one of the few threads of Swift's cooperative pool that every other test shares.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
    }
}

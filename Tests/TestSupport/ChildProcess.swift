import Foundation

/// Runs a command to completion (a `SpawnedProcess`: clean signal mask, no inherited descriptors) and returns its
/// exit status and combined output. Output goes through a file, not a pipe, so a sibling process (or a daemon the
/// command starts) that inherited it cannot keep the reader waiting after the exit: a scratch file, removed after,
/// or `outputPath`, which is kept and appended to (the output returned is what this run appended). A command still
/// running after `timeout` is killed (status 9).
public func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, outputPath: String? = nil,
    timeout: TimeInterval = 300
) throws -> (status: Int32, output: String) {
    let path = outputPath ?? (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("output") + ".log")
    guard FileManager.default.fileExists(atPath: path) || FileManager.default.createFile(atPath: path, contents: nil) else {
        throw CommandFailed(command: executable, status: -1, output: "cannot create \(path)")
    }
    defer { if outputPath == nil { try? FileManager.default.removeItem(atPath: path) } }
    let offset = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    let process = try SpawnedProcess(executable, arguments, environment: environment, stdout: .file(path), stderr: .file(path))
    let status = process.waitBlocking(deadline: Date().addingTimeInterval(timeout)) ?? process.stop(grace: .zero)
    let written = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
    return (status, String(decoding: written.dropFirst(offset), as: UTF8.self))
}

/// Runs a command to completion and returns its combined output (kept in `outputPath` too, if given); throws when
/// it exits non-zero.
@discardableResult
public func runCommand(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, outputPath: String? = nil
) throws -> String {
    let (status, output) = try runProcess(executable, arguments, environment: environment, outputPath: outputPath)
    guard status == 0 else {
        throw CommandFailed(command: ([executable] + arguments).joined(separator: " "), status: status, output: output)
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

/// Waits for the first line `process` writes to `stdoutPath` (a file, not a pipe: a pipe's write end inherited
/// by a sibling started at the same moment would keep a reader waiting forever). Returns the line, or what was
/// written so far if the process exited or stayed silent for `timeout` (then it is killed).
public func readFirstLine(of process: SpawnedProcess, stdoutPath: String, timeout: TimeInterval = 30) -> (line: String, complete: Bool) {
    var data = Data()
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        data = (try? Data(contentsOf: URL(fileURLWithPath: stdoutPath))) ?? Data()
        if data.contains(UInt8(ascii: "\n")) || !process.isRunning { break }
        usleep(10_000)
    }
    guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else {
        process.stop(grace: .zero)
        return (String(decoding: data, as: UTF8.self), false)
    }
    return (String(decoding: data[..<newline], as: UTF8.self), true)
}

/// `readFirstLine` for processes that announce themselves with a JSON object such as
/// `{"event":"listening","port":…}`; the object is nil (and the process stopped) when the line is not one.
public func readAnnouncement(of process: SpawnedProcess, stdoutPath: String, timeout: TimeInterval = 30) -> (object: [String: Any]?, text: String) {
    let (line, complete) = readFirstLine(of: process, stdoutPath: stdoutPath, timeout: timeout)
    let object = complete ? (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) : nil
    if object == nil { process.stop(grace: .zero) }
    return (object, line)
}

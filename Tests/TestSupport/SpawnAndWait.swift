import Foundation

/// Runs `executable` to completion (a `SpawnedProcess`: clean signal mask, no inherited descriptors) and throws
/// when it exits non-zero. With `outputPath`, stdout and stderr go to that file (never a pipe).
public func spawnAndWait(_ executable: String, _ arguments: [String], outputPath: String? = nil) throws {
    let output = outputPath.map { SpawnedProcess.Stream.file($0) } ?? .null
    let process = try SpawnedProcess(executable, arguments, stdout: output, stderr: output)
    let status = process.waitBlocking(deadline: nil) ?? -1
    guard status == 0 else {
        let text = outputPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        throw CommandFailed(command: ([executable] + arguments).joined(separator: " "), status: status, output: text)
    }
}

/// Sends SIGTERM to the daemon whose pid is in `pidFile` and waits (up to 4 s) until it is gone.
public func stopDaemon(pidFile: String) {
    guard let pid = try? String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
          let number = Int32(pid) else { return }
    kill(number, SIGTERM)
    for _ in 0..<200 where kill(number, 0) == 0 { usleep(20_000) }
}

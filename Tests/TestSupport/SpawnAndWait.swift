import Foundation

/// Runs `executable` to completion with posix_spawn + waitpid and a clean signal mask; throws when it exits non-zero.
/// Foundation's `Process` can miss the exit of a short-lived child when other tests launch processes at the same time
/// (the suite hung), and a child spawned from a thread that blocks signals inherits the mask, so a server would
/// ignore SIGTERM forever. With `outputPath`, stdout and stderr go to that file (never a pipe).
public func spawnAndWait(_ executable: String, _ arguments: [String], outputPath: String? = nil) throws {
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var terminating = sigset_t()
    sigemptyset(&terminating)
    for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&terminating, signal) }
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &terminating)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let outputPath {
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    guard spawned == 0 else { throw CommandFailed(command: executable, status: spawned, output: "posix_spawn failed") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    guard status == 0 else {
        let output = outputPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        throw CommandFailed(command: ([executable] + arguments).joined(separator: " "), status: status, output: output)
    }
}

/// Sends SIGTERM to the daemon whose pid is in `pidFile` and waits (up to 4 s) until it is gone.
public func stopDaemon(pidFile: String) {
    guard let pid = try? String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
          let number = Int32(pid) else { return }
    kill(number, SIGTERM)
    for _ in 0..<200 where kill(number, 0) == 0 { usleep(20_000) }
}

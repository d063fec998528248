import Foundation
import Synchronization

/// A child process started with posix_spawn and reaped with waitpid on its own pid.
///
/// It replaces Foundation's `Process`, the likely cause of a whole test target hanging: children inherited the
/// runner's descriptors and blocked signals, and `waitUntilExit` blocked a thread of Swift's small cooperative
/// pool with no bound. A spawned child here gets a clean signal mask with default dispositions (so
/// SIGTERM always works), inherits no descriptor beyond 0-2 (and 3 when handed a listening socket), and writes to files, never pipes; every wait is
/// bounded and ends in SIGKILL.
public final class SpawnedProcess: @unchecked Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        case null
        /// A file, created if missing; appended to.
        case file(String)
    }

    public let pid: pid_t
    public let executable: String
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable` (an absolute path) with `arguments`; `environment` nil inherits the test's own.
    /// `descriptor3`: a descriptor of this process the child gets as its descriptor 3 (a socket bound for it).
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null, descriptor3: Int32? = nil
    ) throws {
        self.executable = executable
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = descriptor == 0 ? O_RDONLY : (O_WRONLY | O_CREAT | O_APPEND)
                posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o644)
            }
        }
        if let descriptor3 { posix_spawn_file_actions_adddup2(&actions, descriptor3, 3) }
        _ = Self.closeFrom?(&actions, descriptor3 == nil ? 3 : 4)

        var pid: pid_t = 0
        let spawned = envp.map { envp in
            envp.withUnsafeBufferPointer { posix_spawn(&pid, executable, &actions, &attributes, argv, $0.baseAddress) }
        } ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw CommandFailed(command: executable, status: spawned, output: "posix_spawn: \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
    }

    /// Kills and reaps a child still running when the handle goes away, so no test leaves one behind.
    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = waitBlocking(deadline: nil)
        }
    }

    /// The exit status once the child is gone: its exit code, or the number of the signal that ended it.
    public var exitStatus: Int32? { poll() }

    public var isRunning: Bool { poll() == nil }

    /// Sends `signal` to the child if it still runs.
    public func signal(_ signal: Int32) {
        reaped.withLock { status in
            if status == nil { kill(pid, signal) }
        }
    }

    /// Waits without holding a thread (polls every 10 ms); after `timeout` sends SIGKILL. Returns the exit status.
    public func waitForExit(timeout: Duration) async -> Int32 {
        if let status = await exitStatus(within: timeout) { return status }
        return poll() ?? -1
    }

    /// The exit status if the child ends within `timeout`; nil if it had to be killed then (it is reaped either way).
    public func exitStatus(within timeout: Duration) async -> Int32? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if let status = poll() { return status }
            try? await Task.sleep(for: .milliseconds(10))
        }
        signal(SIGKILL)
        while poll() == nil { try? await Task.sleep(for: .milliseconds(10)) }
        return nil
    }

    /// SIGTERM, up to `grace` for the exit, then SIGKILL; blocks the calling thread for at most about `grace`.
    @discardableResult
    public func stop(grace: Duration = .seconds(5)) -> Int32 {
        signal(SIGTERM)
        let seconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
        if let status = waitBlocking(deadline: Date().addingTimeInterval(seconds)) { return status }
        signal(SIGKILL)
        return waitBlocking(deadline: nil) ?? -1
    }

    /// Waits for the exit, polling; nil when `deadline` passed first.
    public func waitBlocking(deadline: Date?) -> Int32? {
        while true {
            if let status = poll() { return status }
            if let deadline, Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    private func poll() -> Int32? {
        reaped.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                status = Self.decode(raw)
            } else if result < 0 && errno == ECHILD {
                status = -1
            }
            return status
        }
    }

    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which the Glibc module does not export.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}

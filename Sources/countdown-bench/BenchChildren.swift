import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The processes `countdown-bench system` started (the fake FCM, the workers): noted in a file (`pid executable` per
/// line, COUNTDOWN_BENCH_PIDS) so that scripts/bench-system can kill what is left if the benchmark itself dies, and
/// killed here when the benchmark is stopped by SIGTERM or SIGINT.
final class BenchChildren: Sendable {
    private let pidsPath: String?
    private let pids = Mutex<[Int32]>([])

    init(pidsPath: String?) {
        self.pidsPath = pidsPath
    }

    /// The children of a benchmark scripts/bench-system started: noted where COUNTDOWN_BENCH_PIDS says.
    static func ofThisBenchmark() -> BenchChildren {
        BenchChildren(pidsPath: ProcessInfo.processInfo.environment["COUNTDOWN_BENCH_PIDS"])
    }

    func record(_ pid: Int32, executable: String) {
        pids.withLock { $0.append(pid) }
        guard let pidsPath, let handle = FileHandle(forWritingAtPath: pidsPath) ?? Self.created(pidsPath) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        let path = URL(fileURLWithPath: executable).resolvingSymlinksInPath().path
        try? handle.write(contentsOf: Data("\(pid) \(path)\n".utf8))
    }

    /// On SIGTERM or SIGINT: SIGKILL to every recorded child, then exit with 128 + the signal. The caller keeps the
    /// returned sources for as long as this should hold.
    func stopOnSignals() -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                for pid in pids.withLock({ $0 }) { kill(pid, SIGKILL) }
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    private static func created(_ path: String) -> FileHandle? {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
    }
}

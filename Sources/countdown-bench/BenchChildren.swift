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
    /// Where scripts/bench-system wants the children noted.
    private let pidsPath = ProcessInfo.processInfo.environment["COUNTDOWN_BENCH_PIDS"]
    private let pids = Mutex<[Int32]>([])
    /// The SIGTERM and SIGINT sources, kept for as long as the benchmark runs.
    private let signalSources = Mutex<[any DispatchSourceSignal]>([])

    /// The children of this benchmark: noted where COUNTDOWN_BENCH_PIDS says, and killed when the benchmark is stopped.
    static func ofThisBenchmark() -> BenchChildren {
        let children = BenchChildren()
        children.stopOnSignals()
        return children
    }

    func record(_ pid: Int32, executable: String) {
        pids.withLock { $0.append(pid) }
        guard let pidsPath, let handle = FileHandle(forWritingAtPath: pidsPath) ?? Self.created(pidsPath) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        let path = URL(fileURLWithPath: executable).resolvingSymlinksInPath().path
        try? handle.write(contentsOf: Data("\(pid) \(path)\n".utf8))
    }

    /// On SIGTERM or SIGINT: SIGKILL to every recorded child, then exit with 128 + the signal.
    private func stopOnSignals() {
        signalSources.withLock { sources in
            sources = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
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
    }

    private static func created(_ path: String) -> FileHandle? {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
    }
}

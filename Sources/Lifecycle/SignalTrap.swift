import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Routes SIGTERM and SIGINT to a `ShutdownSignal` instead of killing the process.
public final class SignalTrap: @unchecked Sendable {  // `sources` is never mutated after init
    private let sources: [any DispatchSourceSignal]

    public init(signals: [Int32] = [SIGTERM, SIGINT], onSignal: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "countdown.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { onSignal(number) }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

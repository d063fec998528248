import BlockingIO
import Lifecycle
import Telemetry

/// Holds back the services that write (dispatcher, outbox relay, reconciler) until the database has the schema
/// version this build needs. A worker started before `countdown-admin migrate` (by hand, or without the
/// Kubernetes init container) then serves `/healthz` and a not-ready `/readyz`, but claims and writes nothing
/// until the migration is applied; from then on the gate stays open.
public final class SchemaGate: Sendable {
    /// The highest applied schema version; errors count as "not yet" (readiness reports them).
    private let appliedVersion: @Sendable () async throws -> Int
    public let requiredVersion: Int
    private let interval: Duration
    private let logger: Logger
    private let opened = ShutdownSignal()
    private let announced = Locked(false)

    public init(requiredVersion: Int, interval: Duration = .seconds(2), logger: Logger,
                appliedVersion: @escaping @Sendable () async throws -> Int) {
        self.requiredVersion = requiredVersion
        self.interval = interval
        self.logger = logger
        self.appliedVersion = appliedVersion
    }

    public var isOpen: Bool { opened.isTriggered }

    /// Returns true once the schema is there, false when `shutdown` trips first.
    public func wait(shutdown: ShutdownSignal) async -> Bool {
        while !opened.isTriggered && !shutdown.isTriggered {
            if let applied = try? await appliedVersion(), applied >= requiredVersion {
                opened.trigger()
                break
            }
            if !announced.withLock({ done in defer { done = true }; return done }) {
                logger.warn("waiting for the database schema before claiming jobs",
                            ["required": .int(requiredVersion), "hint": .string("run countdown-admin migrate")])
            }
            _ = await shutdown.sleep(for: interval)
        }
        return opened.isTriggered
    }

    /// `service`, started only once the gate opens (it returns at once if shutdown trips before).
    public func guarding(_ service: any Service) -> any Service {
        GatedService(inner: service, gate: self)
    }
}

/// A service that waits for a `SchemaGate` before it runs.
struct GatedService: Service {
    let inner: any Service
    let gate: SchemaGate

    var name: String { inner.name }

    func run(shutdown: ShutdownSignal) async throws {
        guard await gate.wait(shutdown: shutdown) else { return }
        try await inner.run(shutdown: shutdown)
    }
}

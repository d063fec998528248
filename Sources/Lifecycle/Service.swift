

/// A long-running part of a process: started with the others, asked to stop through the shutdown signal.
public protocol Service: Sendable {
    var name: String { get }
    /// Runs until `shutdown` trips (then finishes or hands back its work) or a fatal error.
    func run(shutdown: ShutdownSignal) async throws
}

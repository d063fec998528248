import BlockingIO
import CountdownFlows
import Lifecycle
import Postgres

/// Start settlers running as a worker's service group runs them, for the length of one test's database:
/// `MigratedDatabase.with` stops those of its client when the test ends, and each writes what it holds first.
enum RunningSettlers {
    private struct Run: Sendable {
        let shutdown: ShutdownSignal
        let task: Task<Void, Never>
    }
    private static let runs = Locked([ObjectIdentifier: [Run]]())

    /// Runs `settler` until the test of `client` ends.
    static func start(_ settler: StartSettler, on client: PostgresClient) {
        let shutdown = ShutdownSignal()
        // Stands beside the test rather than inside it: contexts are built in many shapes, and `stop` awaits it.
        let task = Task { _ = try? await settler.run(shutdown: shutdown) }
        runs.withLock { $0[ObjectIdentifier(client), default: []].append(Run(shutdown: shutdown, task: task)) }
    }

    /// Stops the settlers of `client` and waits until each returned.
    static func stop(on client: PostgresClient) async {
        let stopping = runs.withLock { $0.removeValue(forKey: ObjectIdentifier(client)) ?? [] }
        for run in stopping { run.shutdown.trigger() }
        for run in stopping { await run.task.value }
    }
}

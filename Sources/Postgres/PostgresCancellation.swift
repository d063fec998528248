import Foundation
import Synchronization

/// Links one awaiting task to the connection that runs its work, so that cancelling the task cancels the
/// statement in flight (`PQcancel`) instead of waiting for it to end: the statement then fails and the call
/// throws `CancellationError`, and the connection stays usable. Statements not yet sent are not sent.
final class PostgresCancellation: Sendable {
    private struct State {
        var requested = false
        var target: PostgresCancelRequest?
        var sending: DispatchSemaphore?
    }

    private let state = Mutex(State())

    /// Whether the task asked to be cancelled.
    var isRequested: Bool { state.withLock { $0.requested } }

    /// How long `run` waits for a cancel request it sent to be delivered. `PQcancel` has no timeout of its own; a
    /// server it cannot reach would otherwise hold the connection's thread.
    static let deliveryWait: DispatchTimeInterval = .seconds(2)

    /// Runs `operation` with a new cancellation that cancelling the current task requests.
    static func linked<T>(_ operation: (PostgresCancellation) async throws -> T) async throws -> T {
        let cancellation = PostgresCancellation()
        return try await withTaskCancellationHandler {
            try await operation(cancellation)
        } onCancel: {
            cancellation.request()
        }
    }

    /// Runs `body` on `connection` (on the connection's thread) with cancellation linked to it. Does not return
    /// before a cancel request sent meanwhile has been delivered (up to `deliveryWait`), so that it cannot hit the
    /// connection's next statement.
    func run<T>(on connection: PostgresConnection, _ body: (PostgresConnection) throws -> T) throws -> T {
        let target = connection.makeCancelRequest()
        state.withLock { $0.target = target }
        connection.cancellation = self
        defer {
            connection.cancellation = nil
            let sending = state.withLock { state -> DispatchSemaphore? in
                state.target = nil
                return state.sending
            }
            _ = sending?.wait(timeout: .now() + Self.deliveryWait)
        }
        return try body(connection)
    }

    /// Called from the task's cancellation handler, on any thread: marks the work cancelled and sends the cancel
    /// request from a thread of its own (`PQcancel` blocks while it reaches the server).
    func request() {
        let send: (PostgresCancelRequest, DispatchSemaphore)? = state.withLock { state in
            guard !state.requested else { return nil }
            state.requested = true
            guard let target = state.target else { return nil }
            let sent = DispatchSemaphore(value: 0)
            state.sending = sent
            return (target, sent)
        }
        guard let (target, sent) = send else { return }
        Thread.detachNewThread {
            target.send()
            sent.signal()
        }
    }
}

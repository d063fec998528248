import Synchronization

/// The results of requests sent together: the waiting task is resumed once, when the last of them is answered
/// (one wake-up for the batch instead of one per request).
final class TransferBatch: Sendable {
    typealias Outcome = Result<HTTPResponse, HTTPClientError>

    private struct State {
        var results: [Outcome?]
        var remaining: Int
        var continuation: CheckedContinuation<[Outcome], Never>?
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count))
    }

    /// Sets the task to resume; resumes it at once when every result is already in.
    func wait(with continuation: CheckedContinuation<[Outcome], Never>) {
        let finished = state.withLock { state -> [Outcome]? in
            guard state.remaining == 0 else {
                state.continuation = continuation
                return nil
            }
            return state.results.map { $0! }
        }
        if let finished { continuation.resume(returning: finished) }
    }

    /// Records the result of request `index` (the first one counts); the last one resumes the waiting task.
    func finish(_ index: Int, _ outcome: Outcome) {
        let resume = state.withLock { state -> (CheckedContinuation<[Outcome], Never>, [Outcome])? in
            guard state.results[index] == nil else { return nil }
            state.results[index] = outcome
            state.remaining -= 1
            guard state.remaining == 0, let continuation = state.continuation else { return nil }
            state.continuation = nil
            return (continuation, state.results.map { $0! })
        }
        if let (continuation, results) = resume { continuation.resume(returning: results) }
    }
}

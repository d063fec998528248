import PushGuard
import Synchronization
import Telemetry

/// Sends through `base` and counts every answer in the fleet-wide token guard window. A token refusal is passed on
/// (so the caller clears that token) only while the guard is not tripped; once refusals reach the guard's
/// threshold the refusal becomes a retry after `TokenGuard.retryAfter`, the tokens stay, and an error log names
/// the setting that is likely wrong. Other answers are counted in batches (every `flushEvery` sends or second),
/// so a healthy fleet pays one Redis round trip per batch, and the guard resets once the refusals fall below
/// the threshold. When the window cannot be read, refusals are retried too: a token is never cleared unchecked.
/// A batch is counted as a whole before any of its refusals is let through.
public final class TokenGuardedTransport: PushTransport {
    private struct State {
        var pendingSends = 0
        var lastFlush: ContinuousClock.Instant
        var tripped = false
        var lastLog: ContinuousClock.Instant?
    }

    private let base: any PushTransport
    private let rule: TokenGuard
    private let window: any TokenGuardWindow
    private let logger: Logger
    private let flushEvery: Int
    private let onChange: @Sendable (_ tripped: Bool) -> Void
    private let state: Mutex<State>

    /// - Parameters:
    ///   - flushEvery: answers counted locally before they are added to the shared window (also flushed every second).
    ///   - onChange: told whether the guard is tripped after every evaluation (sets the metric).
    public init(
        _ base: any PushTransport, rule: TokenGuard, window: any TokenGuardWindow, logger: Logger, flushEvery: Int = 64,
        onChange: @escaping @Sendable (_ tripped: Bool) -> Void = { _ in }
    ) {
        self.base = base
        self.rule = rule
        self.window = window
        self.logger = logger.with(["component": "token_guard"])
        self.flushEvery = max(1, flushEvery)
        self.onChange = onChange
        state = Mutex(State(lastFlush: .now))
    }

    /// Whether the last evaluation found the guard tripped.
    public var isTripped: Bool { state.withLock { $0.tripped } }

    /// Sends the batch through `base` and counts its answers together: a batch with token refusals is recorded in
    /// the window at once (one Redis round trip), and its refusals pass only if the guard is not tripped after it.
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        let results = await base.sendAll(messages, onAnswer: onAnswer)
        let refusals = results.compactMap { result -> TokenRefusal? in
            if case .tokenRefused(let refusal) = result { return refusal }
            return nil
        }
        guard let first = refusals.first else {
            if let batch = takeBatch(adding: results.count, force: false) { _ = await evaluate(sends: batch, refusals: 0, refusal: nil) }
            return results
        }
        let pending = takeBatch(adding: 0, force: true) ?? 0
        let held: PushResult
        switch await evaluate(sends: pending + results.count, refusals: refusals.count, refusal: first) {
        case false?: return results
        case true?: held = .retryable(after: rule.retryAfter, reason: "token_guard")
        case nil: held = .retryable(after: rule.retryAfter, reason: "token_guard_unavailable")
        }
        return results.map { result in
            if case .tokenRefused = result { return held }
            return result
        }
    }

    /// Adds the pending answers to the window and decides again (a periodic tick keeps the state, and the
    /// metric, current while nothing is sent).
    public func flush() async {
        _ = await evaluate(sends: takeBatch(adding: 0, force: true) ?? 0, refusals: 0, refusal: nil)
    }

    /// Counts `answers` locally; returns the batch to record when it is due (or everything, when `force`).
    private func takeBatch(adding answers: Int, force: Bool) -> Int? {
        let now = ContinuousClock.now
        return state.withLock { state -> Int? in
            state.pendingSends += answers
            guard force || state.pendingSends >= flushEvery || now - state.lastFlush >= .seconds(1) else { return nil }
            let batch = state.pendingSends
            state.pendingSends = 0
            state.lastFlush = now
            return batch
        }
    }

    /// Records in the window and decides; nil when the window could not be read.
    private func evaluate(sends: Int, refusals: Int, refusal: TokenRefusal?) async -> Bool? {
        let counts: TokenGuard.Counts
        do {
            counts = try await window.record(sends: sends, refusals: refusals)
        } catch {
            if refusal != nil {
                logger.warn("token guard window unavailable: token refusal retried later, token kept", ["error": .string("\(error)")])
            }
            return nil
        }
        let tripped = rule.isTripped(counts)
        let now = ContinuousClock.now
        let (changed, shouldLog) = state.withLock { state -> (Bool, Bool) in
            let changed = state.tripped != tripped
            state.tripped = tripped
            let due = tripped && refusal != nil && (changed || state.lastLog.map { now - $0 >= rule.window } ?? true)
            if due { state.lastLog = now }
            return (changed, due)
        }
        onChange(tripped)
        if shouldLog, let refusal {
            logger.error("token guard tripped: push services refuse too many tokens, so none is cleared and those pushes are retried later; "
                         + "check \(refusal.suspect)", [
                "reason": .string(refusal.reason), "likely_wrong": .string(refusal.suspect),
                "refusals": .int(counts.refusals), "sends": .int(counts.sends),
                "window_seconds": .int(Int(rule.window.components.seconds)),
            ])
        } else if changed && !tripped {
            logger.info("token guard reset: token refusals are back under the threshold", [
                "refusals": .int(counts.refusals), "sends": .int(counts.sends),
            ])
        }
        return tripped
    }
}

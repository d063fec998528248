import CountdownDomain
import Foundation

extension SessionFanout {
    /// Runs `body`, the rounds of a claimed update fan-out, while keeping the stream's update claim `claim` alive:
    /// every quarter of `seconds` it is extended to `seconds` from now. A fan-out that outlasts its claim (a large
    /// stream, a slow gateway, a loaded host) would otherwise let another run of the stream's job (queued again by
    /// the relay or the reconciler meanwhile) take the claim over and send again to every session this run had not
    /// recorded yet. A worker that dies stops extending, so its claim still expires and another worker takes over.
    func keepingUpdateClaim(_ streamID: String, claim: String, seconds: Int,
                            _ body: @escaping @Sendable () async throws -> HandlerOutcome) async throws -> HandlerOutcome {
        try await withThrowingTaskGroup(of: HandlerOutcome?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                await keepUpdateClaim(streamID, claim: claim, seconds: seconds)
                return nil
            }
            while let result = try await group.next() {
                guard let outcome = result else { continue }
                group.cancelAll()
                return outcome
            }
            // The body's task always returns an outcome or throws.
            return .retry(after: nil, reason: "update_run_ended_without_outcome")
        }
    }

    /// Extends the claim until cancelled, or until it is found no longer this run's.
    private func keepUpdateClaim(_ streamID: String, claim: String, seconds: Int) async {
        let every = Duration.seconds(seconds) / 4
        while true {
            do { try await Task.sleep(for: every) } catch { return }
            do {
                if try await !context.sessions.extendUpdate(streamID, claim: claim, seconds: seconds) {
                    context.logger.warn("an update fan-out lost its claim on the stream", ["stream": .string(streamID)])
                    return
                }
            } catch {
                if Task.isCancelled { return }
                context.logger.warn("could not extend an update fan-out's claim", ["stream": .string(streamID), "error": .error(error)])
            }
        }
    }
}

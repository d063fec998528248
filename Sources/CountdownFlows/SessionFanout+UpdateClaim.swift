import CountdownDomain
import Foundation

extension SessionFanout {
    /// Keeps the stream's update claim `claim` alive while the rounds of a claimed update fan-out run (`keeping`): a
    /// fan-out that outlasts its claim (a large stream, a slow gateway, a loaded host) would otherwise let another run
    /// of the stream's job (queued again by the relay or the reconciler meanwhile) take the claim over and send again
    /// to every session this run had not recorded yet. Stops once the claim is found no longer this run's.
    func updateClaimKeeper(_ streamID: String, claim: String, seconds: Int) -> ClaimKeeper {
        ClaimKeeper(name: "update_claim", seconds: seconds) { [context] in
            do {
                if try await context.sessions.extendUpdate(streamID, claim: claim, seconds: seconds) { return true }
                context.logger.warn("an update fan-out lost its claim on the stream", ["stream": .string(streamID)])
                return false
            } catch {
                if !Task.isCancelled {
                    context.logger.warn("could not extend an update fan-out's claim", ["stream": .string(streamID), "error": .error(error)])
                }
                return true
            }
        }
    }
}

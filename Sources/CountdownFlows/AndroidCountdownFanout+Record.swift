import CountdownStore
import Foundation

extension AndroidCountdownFanout {
    /// Writes one batch's accepted updates or ends as its answers arrive (an end also settles its delivery
    /// attempts), so a crash repeats only what is out. False when the write failed: the caller writes them with the
    /// fan-out's outcome instead, and until then a crash would repeat these too.
    func record(_ accepted: [AndroidCountdownQueries.Settlement], stream streamID: String, plannedStart: Date? = nil,
                ended: Bool = false) async -> Bool {
        guard !accepted.isEmpty else { return true }
        do {
            try await context.androidCountdowns.countdownsAccepted(accepted, stream: streamID, plannedStart: plannedStart, ended: ended)
            return true
        } catch {
            context.logger.warn("android countdown deliveries could not be recorded as they arrived",
                                ["stream": .string(streamID), "error": .error(error)])
            return false
        }
    }
}

import CountdownStore
import Foundation
import CountdownDomain

extension SessionFanout {
    /// Sends the end pushes of `addressed` (one push each, in order) and deletes each batch's accepted sessions as
    /// its answers arrive, so a crash repeats only the ends out at that moment (SPEC 10.1), not the whole fan-out.
    /// Returns every delivery in order and how many sessions were deleted on the way. A batch whose record cannot
    /// be written is left to the caller's final transaction, which deletes every accepted session again.
    func sendEnds(_ pushes: [OutgoingPush], to addressed: [Session], stream streamID: String) async -> (deliveries: [Delivery], deleted: Int) {
        var deliveries = [Delivery](repeating: .retry(after: nil, reason: "not_sent"), count: pushes.count)
        var deleted = 0
        await context.push.sendEach(pushes, kind: .end, window: context.push.batchesOut) { start, batch, _ in
            deliveries.replaceSubrange(start..<start + batch.count, with: batch)
            let accepted = zip(addressed[start..<start + batch.count], batch).compactMap { session, delivery in
                if case .accepted = delivery { session } else { nil }
            }
            _ = await context.recordArrived(accepted, what: "end", stream: streamID) {
                deleted += try await context.sessions.endsAccepted($0, stream: streamID)
            }
        }
        return (deliveries, deleted)
    }
}

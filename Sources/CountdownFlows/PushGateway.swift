import CountdownDomain
import PushPayloads

/// Which flow a push belongs to; a metric label.
public enum PushKind: String, Sendable, CaseIterable {
    case start, update, end, reminder
}

/// A push ready to go: payload plus the tokens it is addressed to.
public enum OutgoingPush: Sendable {
    /// Live Activity start/update/end: `fcmToken` addresses the device (unused by direct APNs),
    /// `activityToken` is the push-to-start token (start) or the session's runtime token (update/end).
    case liveActivity(LiveActivityPayload, fcmToken: String, activityToken: String)
    /// A plain notification (reminders).
    case notification(ReminderNotification, fcmToken: String)
}

/// The seam between the flows and the push transports (FCM, APNs, log, or a fake in tests).
public protocol PushGateway: Sendable {
    func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery
}

extension PushGateway {
    /// Sends every push concurrently (the gateway bounds how many are in flight) and returns results in order.
    public func sendAll(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery] {
        await withTaskGroup(of: (Int, Delivery).self) { group in
            for (index, push) in pushes.enumerated() {
                group.addTask { (index, await self.send(push, kind: kind)) }
            }
            var results = [Delivery](repeating: .retry(after: nil, reason: "not_sent"), count: pushes.count)
            for await (index, delivery) in group { results[index] = delivery }
            return results
        }
    }
}

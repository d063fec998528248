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
    /// An Android countdown data message (SPEC 10.4) to the device's FCM token.
    case androidCountdown(AndroidCountdownMessage, fcmToken: String)

    /// The `platform` metric label: `ios`, `android`, or `any` for a reminder.
    public var platform: String {
        switch self {
        case .liveActivity: "ios"
        case .androidCountdown: "android"
        case .notification: "any"
        }
    }
}

/// The seam between the flows and the push transports (FCM, APNs, log, or a fake in tests). A gateway takes one batch
/// per call; `sendEach` cuts a fan-out's pushes into batches (the one place pushes are batched on their way to the
/// transport, which hands each batch to the HTTP client as it is).
public protocol PushGateway: Sendable {
    /// Most pushes the gateway has out at once (`PUSH_CONCURRENCY`), when it bounds them.
    var pushesInFlightLimit: Int? { get }

    /// Sends one batch of at most `pushesInFlightLimit` pushes concurrently and returns their results in order once
    /// all are in. A batch takes all its slots (`PUSH_CONCURRENCY`) at once, so batches never wait on each other while
    /// holding some. Without `keepingSlots` each push gives its slot back as its answer arrives; with it the slots
    /// stay taken after the answers, as the returned `PushSlots`, until the caller gives them back once it recorded
    /// the outcomes.
    func sendBatch(_ pushes: [OutgoingPush], kind: PushKind, keepingSlots: Bool) async -> (deliveries: [Delivery], slots: PushSlots)
}

extension PushGateway {
    /// Pushes per batch: 32, at most a quarter of `PUSH_CONCURRENCY` (so a small setting still keeps several batches
    /// out at once, each taking its slots in one go).
    public var batchSize: Int {
        min(32, max(1, (pushesInFlightLimit ?? 128) / 4))
    }

    /// Batches a fan-out hands the gateway at once: enough to keep twice its `PUSH_CONCURRENCY` waiting (256 when it
    /// does not say), so the gateway stays busy while answers are recorded as they arrive.
    public var batchesOut: Int {
        max(2, 2 * (pushesInFlightLimit ?? 256) / batchSize)
    }

    /// Sends every push concurrently (the gateway bounds how many are in flight) and returns results in order.
    public func sendAll(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery] {
        var results = [Delivery](repeating: .retry(after: nil, reason: "not_sent"), count: pushes.count)
        await sendEach(pushes, kind: kind) { start, deliveries, _ in
            results.replaceSubrange(start..<start + deliveries.count, with: deliveries)
        }
        return results
    }

    /// Sends every push concurrently, in batches of `batchSize` (each batch wakes this task once), and hands each
    /// batch's results to `onBatch` as the batch completes, one batch at a time, with the index of its first push.
    /// With `window`, at most that many batches are handed to the gateway at once (the next as one completes): the
    /// gateway shares its slots fairly among the batches waiting for them, so with every batch handed over at once
    /// all of them complete near the end, and answers arrive long before `onBatch` sees them.
    ///
    /// `keepingSlots` is for pushes whose outcomes are recorded so that a crash does not repeat them (starts,
    /// reminders): each batch's slots stay taken until `onBatch` (or whoever it hands them to) gives them back once
    /// the outcomes are durable, so a slot never takes its next push while the previous one's outcome lives only in
    /// memory, and a crash repeats at most one push per slot (SPEC 12.1). Without it the slots handed to `onBatch`
    /// hold nothing.
    public func sendEach(_ pushes: [OutgoingPush], kind: PushKind, keepingSlots: Bool = false, window: Int? = nil,
                         _ onBatch: (_ start: Int, [Delivery], PushSlots) async -> Void) async {
        let size = batchSize
        let starts = Array(stride(from: 0, to: pushes.count, by: size))
        await withTaskGroup(of: (Int, [Delivery], PushSlots).self) { group in
            func add(_ start: Int) {
                let batch = Array(pushes[start..<min(start + size, pushes.count)])
                group.addTask {
                    let (deliveries, slots) = await self.sendBatch(batch, kind: kind, keepingSlots: keepingSlots)
                    precondition(deliveries.count == batch.count, "the gateway answered \(deliveries.count) of \(batch.count) pushes")
                    return (start, deliveries, slots)
                }
            }
            var next = starts.makeIterator()
            for _ in 0..<min(starts.count, max(1, window ?? starts.count)) { next.next().map(add) }
            for await (start, deliveries, slots) in group {
                next.next().map(add)
                await onBatch(start, deliveries, slots)
            }
        }
    }
}

import BlockingIO
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

/// The seam between the flows and the push transports (FCM, APNs, log, or a fake in tests).
public protocol PushGateway: Sendable {
    func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery

    /// Sends the pushes concurrently and returns their results in order once all are in.
    func sendBatch(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery]

    /// Most pushes the gateway has out at once (`PUSH_CONCURRENCY`), when it bounds them.
    var pushesInFlightLimit: Int? { get }

    /// Sends the pushes as `sendBatch` does, but their slots (`PUSH_CONCURRENCY`) stay taken after the answers until
    /// the caller gives them back (`PushSlots.release`), once it recorded the outcomes. At most `recordedBatchSize`
    /// pushes per call: a call takes all its slots at once, so calls holding slots never wait on each other.
    func sendBatchKeepingSlots(_ pushes: [OutgoingPush], kind: PushKind) async -> (deliveries: [Delivery], slots: PushSlots)
}

/// How many pushes `sendEach` hands to the gateway together.
public let pushBatchSize = 32

extension PushGateway {
    public var pushesInFlightLimit: Int? { nil }

    /// Without a bound on pushes in flight there are no slots to keep.
    public func sendBatchKeepingSlots(_ pushes: [OutgoingPush], kind: PushKind) async -> (deliveries: [Delivery], slots: PushSlots) {
        (await sendBatch(pushes, kind: kind), .none)
    }

    /// Pushes per batch of `sendEachRecorded`: `pushBatchSize`, at most a quarter of `PUSH_CONCURRENCY` (so several
    /// batches are out at once, each taking its slots in one go).
    public var recordedBatchSize: Int {
        min(pushBatchSize, max(1, (pushesInFlightLimit ?? 4 * pushBatchSize) / 4))
    }

    /// One `send` per push, concurrently.
    public func sendBatch(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery] {
        await pushes.concurrentMap { await self.send($0, kind: kind) }
    }

    /// Sends every push concurrently (the gateway bounds how many are in flight) and returns results in order.
    public func sendAll(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery] {
        var results = [Delivery](repeating: .retry(after: nil, reason: "not_sent"), count: pushes.count)
        await sendEach(pushes, kind: kind) { start, deliveries in
            results.replaceSubrange(start..<start + deliveries.count, with: deliveries)
        }
        return results
    }

    /// Sends every push concurrently, in batches of `pushBatchSize` (each batch wakes this task once), and hands
    /// each batch's results to `onBatch` as the batch completes, one batch at a time, with the index of its first
    /// push. With `window`, at most that many batches are handed to the gateway at once (the next as one completes):
    /// the gateway shares its permits fairly among the batches waiting for them, so with every batch handed over at
    /// once all of them complete near the end, and answers arrive long before `onBatch` sees them.
    public func sendEach(_ pushes: [OutgoingPush], kind: PushKind, window: Int? = nil,
                         _ onBatch: (_ start: Int, [Delivery]) async -> Void) async {
        await sendInBatches(pushes, size: pushBatchSize, window: window, send: { (await self.sendBatch($0, kind: kind), PushSlots.none) }) {
            start, deliveries, _ in await onBatch(start, deliveries)
        }
    }

    /// As `sendEach`, in batches of `recordedBatchSize`, for pushes whose outcomes are recorded so that a crash does
    /// not repeat them (starts, reminders): each batch's slots stay taken until `onBatch` (or whoever it hands them
    /// to) gives them back once the outcomes are durable, so a slot never takes its next push while the previous
    /// one's outcome lives only in memory, and a crash repeats at most one push per slot (SPEC 12.1).
    public func sendEachRecorded(_ pushes: [OutgoingPush], kind: PushKind, window: Int? = nil,
                                 _ onBatch: (_ start: Int, [Delivery], PushSlots) async -> Void) async {
        await sendInBatches(pushes, size: recordedBatchSize, window: window, send: { await self.sendBatchKeepingSlots($0, kind: kind) }, onBatch)
    }

    private func sendInBatches(_ pushes: [OutgoingPush], size: Int, window: Int?,
                               send: @escaping @Sendable ([OutgoingPush]) async -> (deliveries: [Delivery], slots: PushSlots),
                               _ onBatch: (_ start: Int, [Delivery], PushSlots) async -> Void) async {
        let starts = Array(stride(from: 0, to: pushes.count, by: size))
        await withTaskGroup(of: (Int, [Delivery], PushSlots).self) { group in
            func add(_ start: Int) {
                let batch = Array(pushes[start..<min(start + size, pushes.count)])
                group.addTask {
                    let (deliveries, slots) = await send(batch)
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

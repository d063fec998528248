/// Sends Live Activity pushes through `liveActivities` and notifications and Android data messages through
/// `notifications`: with `PUSH_TRANSPORT=apns`, reminders (plain notifications) and the Android countdown still go
/// through FCM.
public struct RoutingTransport: PushTransport {
    private let liveActivities: any PushTransport
    private let notifications: any PushTransport

    public init(liveActivities: any PushTransport, notifications: any PushTransport) {
        self.liveActivities = liveActivities
        self.notifications = notifications
    }

    /// Splits the batch by content; both parts are sent concurrently.
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        var activities: [Int] = []
        var plain: [Int] = []
        for (index, message) in messages.enumerated() {
            if case .liveActivity = message.content { activities.append(index) } else { plain.append(index) }
        }
        if plain.isEmpty { return await liveActivities.sendAll(messages, onAnswer: onAnswer) }
        if activities.isEmpty { return await notifications.sendAll(messages, onAnswer: onAnswer) }
        async let first = liveActivities.sendAll(activities.map { messages[$0] }, onAnswer: Self.hook(onAnswer, telling: activities))
        let second = await notifications.sendAll(plain.map { messages[$0] }, onAnswer: Self.hook(onAnswer, telling: plain))
        var results = [PushResult?](repeating: nil, count: messages.count)
        for (index, result) in zip(activities, await first) { results[index] = result }
        for (index, result) in zip(plain, second) { results[index] = result }
        return results.map { $0! }
    }

    /// `onAnswer` for a part of the batch: tells the index in the whole batch of the part's `indices[position]`.
    private static func hook(_ onAnswer: PushAnswerHook?, telling indices: [Int]) -> PushAnswerHook? {
        guard let onAnswer else { return nil }
        return { position in onAnswer(indices[position]) }
    }
}

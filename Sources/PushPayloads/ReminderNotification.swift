import JSON

/// A plain stream reminder notification, independent of its transport (FCM `notification` + `data`).
public struct ReminderNotification: Sendable, Equatable {
    public var title: String
    public var body: String
    /// `type` ("stream_reminder"), `streamId` and `deepLink`.
    public var data: [String: String]
    /// How long the push services may keep it and what it replaces (SPEC 10.2); nil for none.
    public var delivery: NotificationDelivery?

    public init(title: String, body: String, data: [String: String], delivery: NotificationDelivery? = nil) {
        self.title = title
        self.body = body
        self.data = data
        self.delivery = delivery
    }

    /// The notification as a JSON object (`title`, `body`, `data`, and `delivery` when set), for logs and golden
    /// files.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["title": .string(title), "body": .string(body), "data": .object(data.mapValues { .string($0) })]
        if let delivery { object["delivery"] = delivery.json }
        return .object(object)
    }
}

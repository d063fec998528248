import JSON

/// A plain stream reminder notification, independent of its transport (FCM `notification` + `data`).
public struct ReminderNotification: Sendable, Equatable {
    public var title: String
    public var body: String
    /// `type` ("stream_reminder"), `streamId` and `deepLink`.
    public var data: [String: String]

    public init(title: String, body: String, data: [String: String]) {
        self.title = title
        self.body = body
        self.data = data
    }

    /// The notification as a JSON object (`title`, `body`, `data`), for logs and golden files.
    public var json: JSONValue {
        .object(["title": .string(title), "body": .string(body), "data": .object(data.mapValues { .string($0) })])
    }
}

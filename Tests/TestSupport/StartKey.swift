/// One start the system should send once: a stream and the token it goes to (an iOS device's push-to-start token,
/// or an Android device's FCM token when the Android countdown is on).
public struct StartKey: Hashable, Sendable, CustomStringConvertible {
    public let stream: String
    public let token: String

    public init(stream: String, token: String) {
        self.stream = stream
        self.token = token
    }

    /// An Android countdown's start: seeded FCM tokens start with `fcm-`, push-to-start tokens are hexadecimal.
    public var isAndroid: Bool { token.hasPrefix("fcm-") }

    public var description: String { "(\(stream), \(token))" }
}

import Foundation
import JSON
import Telemetry

/// `PUSH_TRANSPORT=log`: prints each push as one JSON line (tokens shortened to their last 8 characters) and
/// reports it accepted. Sends nothing.
public struct LogTransport: PushTransport {
    private let write: @Sendable (String) -> Void

    /// - Parameter write: receives each line; standard output by default.
    public init(write: @escaping @Sendable (String) -> Void = LogTransport.standardOutput) {
        self.write = write
    }

    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        messages.enumerated().map { index, message in
            defer { onAnswer?(index) }
            write(Self.line(for: message))
            return .accepted(messageName: "log/\(message.id)")
        }
    }

    /// The JSON line for `message`.
    public static func line(for message: PushMessage) -> String {
        var json = JSONWriter()
        switch message.content {
        case let .androidData(fcmToken, options, data): return androidDataLine(id: message.id, fcmToken: fcmToken, options: options, data: data)
        case let .liveActivity(fcmToken, activityToken, apnsHeaders, apsJSON):
            json.object { line in
                line.member("push", "live_activity")
                line.member("id", message.id)
                line.member("fcm_token", Redact.token(fcmToken))
                line.member("activity_token", Redact.token(activityToken))
                line.key("apns_headers")
                line.object(apnsHeaders)
                line.key("payload")
                if FCMRequestBody.isJSONObject(apsJSON) { line.raw(apsJSON) } else { line.string(String(decoding: apsJSON, as: UTF8.self)) }
            }
        case let .notification(fcmToken, title, body, data, options):
            json.object { line in
                line.member("push", "notification")
                line.member("id", message.id)
                line.member("fcm_token", Redact.token(fcmToken))
                line.member("title", title)
                line.member("body", body)
                line.key("data")
                line.object(data)
                let headers = options.apnsHeaders
                if !headers.isEmpty {
                    line.key("apns_headers")
                    line.object(headers)
                }
                if let ttl = options.androidTTLSeconds { line.member("android_ttl", "\(ttl)s") }
                if let channel = options.androidChannelID { line.member("android_channel_id", channel) }
                if let tag = options.androidTag { line.member("android_tag", tag) }
            }
        }
        return String(decoding: json.bytes, as: UTF8.self)
    }

    public static let standardOutput: @Sendable (String) -> Void = { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

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
            json.raw("{\"push\":\"live_activity\"")
            json.member("id", message.id)
            json.member("fcm_token", Redact.token(fcmToken))
            json.member("activity_token", Redact.token(activityToken))
            json.raw(",\"apns_headers\":")
            json.object(apnsHeaders)
            json.raw(",\"payload\":")
            if FCMRequestBody.isJSONObject(apsJSON) { json.raw(apsJSON) } else { json.string(String(decoding: apsJSON, as: UTF8.self)) }
        case let .notification(fcmToken, title, body, data, options):
            json.raw("{\"push\":\"notification\"")
            json.member("id", message.id)
            json.member("fcm_token", Redact.token(fcmToken))
            json.member("title", title)
            json.member("body", body)
            json.raw(",\"data\":")
            json.object(data)
            let headers = options.apnsHeaders
            if !headers.isEmpty {
                json.raw(",\"apns_headers\":")
                json.object(headers)
            }
            if let ttl = options.androidTTLSeconds { json.member("android_ttl", "\(ttl)s") }
            if let channel = options.androidChannelID { json.member("android_channel_id", channel) }
            if let tag = options.androidTag { json.member("android_tag", tag) }
        }
        json.raw("}")
        return String(decoding: json.bytes, as: UTF8.self)
    }

    public static let standardOutput: @Sendable (String) -> Void = { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

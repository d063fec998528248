import JSON

/// The JSON body of an FCM HTTP v1 `messages:send` request (SPEC 6).
public enum FCMRequestBody {
    /// Builds the body; nil when a live activity's `apsJSON` is not a JSON object (nothing should be sent).
    public static func encode(_ message: PushMessage) -> [UInt8]? {
        var json = JSONWriter()
        switch message.content {
        case let .androidData(fcmToken, options, data): return encodeAndroidData(fcmToken: fcmToken, options: options, data: data)
        case let .liveActivity(fcmToken, activityToken, apnsHeaders, apsJSON):
            guard isJSONObject(apsJSON) else { return nil }
            writeMessage(fcmToken, into: &json) { message in
                message.key("apns")
                message.object { apns in
                    apns.member("live_activity_token", activityToken)
                    apns.key("headers")
                    apns.object(apnsHeaders)
                    apns.key("payload")
                    apns.raw(apsJSON)
                }
            }
        case let .notification(fcmToken, title, body, data, options):
            writeMessage(fcmToken, into: &json) { message in
                message.key("notification")
                message.object { notification in
                    notification.member("title", title)
                    notification.member("body", body)
                }
                message.key("data")
                message.object(data)
                android(options, into: &message)
                message.key("apns")
                message.object { apns in
                    let headers = options.apnsHeaders
                    if !headers.isEmpty {
                        apns.key("headers")
                        apns.object(headers)
                    }
                    apns.key("payload")
                    apns.raw("{\"aps\":{\"sound\":\"default\"}}")
                }
            }
        }
        return json.bytes
    }

    /// `{"message":{"token":…,…}}` with the members `body` writes after the token.
    private static func writeMessage(_ fcmToken: String, into json: inout JSONWriter, _ body: (inout JSONWriter) -> Void) {
        json.object { root in
            root.key("message")
            root.object { message in
                message.member("token", fcmToken)
                body(&message)
            }
        }
    }

    /// `"android":{"ttl":"412s","collapse_key":…,"notification":{"channel_id":…,"tag":…}}` with the options that are
    /// set; nothing when none is.
    private static func android(_ options: NotificationOptions, into json: inout JSONWriter) {
        let ttl = options.androidTTLSeconds
        let collapse = options.collapseID
        let channel = options.androidChannelID
        let tag = options.androidTag
        guard ttl != nil || collapse != nil || channel != nil || tag != nil else { return }
        json.key("android")
        json.object { android in
            if let ttl { android.member("ttl", "\(max(0, ttl))s") }
            if let collapse { android.member("collapse_key", collapse) }
            guard channel != nil || tag != nil else { return }
            android.key("notification")
            android.object { notification in
                if let channel { notification.member("channel_id", channel) }
                if let tag { notification.member("tag", tag) }
            }
        }
    }

    /// A shape check, not a parse (parsing every payload again cost a fifth of a push's CPU): the payload
    /// builders emit JSON objects (golden-tested), and FCM refuses anything malformed with INVALID_ARGUMENT.
    static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return false
        }
        return last > first && bytes[first] == UInt8(ascii: "{") && bytes[last] == UInt8(ascii: "}")
    }
}

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
            json.raw("{\"message\":{\"token\":")
            json.string(fcmToken)
            json.raw(",\"apns\":{\"live_activity_token\":")
            json.string(activityToken)
            json.raw(",\"headers\":")
            json.object(apnsHeaders)
            json.raw(",\"payload\":")
            json.raw(apsJSON)
            json.raw("}}}")
        case let .notification(fcmToken, title, body, data, options):
            json.raw("{\"message\":{\"token\":")
            json.string(fcmToken)
            json.raw(",\"notification\":{\"title\":")
            json.string(title)
            json.raw(",\"body\":")
            json.string(body)
            json.raw("},\"data\":")
            json.object(data)
            android(options, into: &json)
            json.raw(",\"apns\":{")
            let headers = options.apnsHeaders
            if !headers.isEmpty {
                json.raw("\"headers\":")
                json.object(headers)
                json.raw(",")
            }
            json.raw("\"payload\":{\"aps\":{\"sound\":\"default\"}}}}}")
        }
        return json.bytes
    }

    /// `,"android":{"ttl":"412s","collapse_key":…,"notification":{"channel_id":…,"tag":…}}` with the options that are
    /// set; nothing when none is.
    private static func android(_ options: NotificationOptions, into json: inout JSONWriter) {
        var members: [(String, String)] = []
        if let ttl = options.androidTTLSeconds { members.append(("ttl", "\(max(0, ttl))s")) }
        if let collapse = options.collapseID { members.append(("collapse_key", collapse)) }
        var notification: [(String, String)] = []
        if let channel = options.androidChannelID { notification.append(("channel_id", channel)) }
        if let tag = options.androidTag { notification.append(("tag", tag)) }
        guard !members.isEmpty || !notification.isEmpty else { return }
        json.raw(",\"android\":{")
        func write(_ pairs: [(String, String)]) {
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { json.raw(",") }
                json.string(key)
                json.raw(":")
                json.string(value)
            }
        }
        write(members)
        if !notification.isEmpty {
            if !members.isEmpty { json.raw(",") }
            json.raw("\"notification\":{")
            write(notification)
            json.raw("}")
        }
        json.raw("}")
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

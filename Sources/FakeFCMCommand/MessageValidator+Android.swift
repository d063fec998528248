import JSON

/// FCM's checks of `message.android` (known fields and their types, `priority`, `ttl` as a protobuf Duration), of
/// the data payload's size, and the project's rules for the Android countdown's data messages (SPEC 10.4).
extension MessageValidator {
    /// The fields of FCM v1's `AndroidConfig`.
    static let androidFields: Set<String> = [
        "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options", "direct_boot_ok",
        "bandwidth_constrained_ok", "restricted_satellite_ok",
    ]
    /// The fields of FCM v1's `AndroidNotification`, and which of them are strings.
    static let androidNotificationFields: Set<String> = androidNotificationStrings.union([
        "body_loc_args", "title_loc_args", "sticky", "event_time", "local_only", "notification_priority", "default_sound",
        "default_vibrate_timings", "default_light_settings", "vibrate_timings", "visibility", "notification_count",
        "light_settings", "bypass_proxy_notification", "proxy",
    ])
    static let androidNotificationStrings: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "title_loc_key", "channel_id", "ticker", "image",
    ]
    /// FCM's payload limit, counted over the keys and values of the data map(s).
    static let maxDataPayloadBytes = 4096
    /// FCM's longest time to live: 4 weeks.
    static let maxTTLSeconds = 2_419_200
    static let countdownEndReasons: Set<String> = ["ready", "started", "cancelled", "expired"]

    /// Checks `message.android` as FCM does; nothing when it is absent.
    static func checkAndroidOptions(_ value: JSONValue?) throws(Violation) {
        guard let android = try optionalObject(value, field: "message.android") else { return }
        for key in android.keys where !androidFields.contains(key) {
            throw Violation(field: "message.android.\(key)",
                            description: "Invalid JSON payload received. Unknown name \"\(key)\" at 'message.android': Cannot find field.")
        }
        if let priority = android["priority"] {
            guard let text = priority.string else { throw typeViolation("message.android.priority", expected: "string", got: priority) }
            guard text == "HIGH" || text == "NORMAL" else {
                throw Violation(field: "message.android.priority",
                                description: "Invalid value at 'message.android.priority' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), \"\(text)\"")
            }
        }
        if let ttl = android["ttl"] {
            guard let text = ttl.string else { throw typeViolation("message.android.ttl", expected: "string", got: ttl) }
            guard let seconds = durationSeconds(text) else {
                throw Violation(field: "message.android.ttl",
                                description: "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), \"\(text)\"")
            }
            guard seconds <= Double(maxTTLSeconds) else {
                throw Violation(field: "message.android.ttl", description: "ttl \(text) is longer than 4 weeks (\(maxTTLSeconds)s)")
            }
        }
        for key in ["collapse_key", "restricted_package_name"] {
            if let entry = android[key], entry.string == nil { throw typeViolation("message.android.\(key)", expected: "string", got: entry) }
        }
        for key in ["direct_boot_ok", "bandwidth_constrained_ok", "restricted_satellite_ok"] {
            if let entry = android[key] {
                guard case .bool = entry else { throw typeViolation("message.android.\(key)", expected: "boolean", got: entry) }
            }
        }
        if let data = android["data"] { try stringMap(data, field: "message.android.data") }
        if let options = try optionalObject(android["fcm_options"], field: "message.android.fcm_options") {
            for key in options.keys where key != "analytics_label" {
                throw Violation(field: "message.android.fcm_options.\(key)", description: "Invalid JSON payload received. Unknown name \"\(key)\".")
            }
        }
        if let notification = try optionalObject(android["notification"], field: "message.android.notification") {
            for (key, entry) in notification {
                guard androidNotificationFields.contains(key) else {
                    throw Violation(field: "message.android.notification.\(key)",
                                    description: "Invalid JSON payload received. Unknown name \"\(key)\" at 'message.android.notification': Cannot find field.")
                }
                if androidNotificationStrings.contains(key), entry.string == nil {
                    throw typeViolation("message.android.notification.\(key)", expected: "string", got: entry)
                }
            }
        }
    }

    /// FCM's 4096-byte payload limit over the data map's keys and values (`android.data` replaces `data` when set).
    static func checkDataSize(_ message: [String: JSONValue]) throws(Violation) {
        let data = message["android"]?["data"]?.object ?? message["data"]?.object ?? [:]
        let size = data.reduce(0) { $0 + $1.key.utf8.count + ($1.value.string?.utf8.count ?? 0) }
        guard size <= maxDataPayloadBytes else {
            throw Violation(field: "message.data", description: "Message is too big: \(size) bytes of data (at most \(maxDataPayloadBytes))")
        }
    }

    /// Seconds of a protobuf Duration in JSON (`"412s"`, `"3.5s"`: digits, up to 9 fractional digits, `s`); nil
    /// when it is not one.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let parts = text.dropLast().split(separator: ".", omittingEmptySubsequences: false)
        let digits: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        switch parts.count {
        case 1 where digits(parts[0]): return Double(parts[0])
        case 2 where digits(parts[0]) && digits(parts[1]) && parts[1].count <= 9: return Double(text.dropLast())
        default: return nil
        }
    }

    /// The event a data-only message is recorded under: `android_start|update|end` for the Android countdown
    /// (after its checks), `data` for any other.
    static func dataMessageEvent(_ message: [String: JSONValue]) throws(Violation) -> String {
        let data = message["data"]?.object ?? [:]
        guard data["type"]?.string == "stream_countdown" else { return "data" }
        let field = "message.data"
        let event = try nonEmptyString(data["event"], field: "\(field).event")
        guard liveActivityEvents.contains(event) else {
            throw Violation(field: "\(field).event", description: "event must be start, update or end, got \"\(event)\"")
        }
        for key in ["streamId", "title", "body", "streamTitle", "deepLink"] {
            _ = try nonEmptyString(data[key], field: "\(field).\(key)")
        }
        guard data["creatorName"] != nil else { throw Violation(field: "\(field).creatorName", description: "\(field).creatorName is required") }
        if let role = data["role"]?.string, role != "creator" && role != "guest" {
            throw Violation(field: "\(field).role", description: "role must be creator or guest, got \"\(role)\"")
        }
        let seconds = event == "end" ? ["scheduledStartAt", "timestamp", "dismissAt"] : ["scheduledStartAt", "timestamp", "staleAt"]
        for key in seconds {
            let value = try decimal(data[key], field: "\(field).\(key)")
            guard value < secondsCeiling else { throw Violation(field: "\(field).\(key)", description: "\(value) is not epoch seconds (milliseconds?)") }
        }
        _ = try decimal(data["viewerCount"], field: "\(field).viewerCount")
        guard try decimal(data["seq"], field: "\(field).seq") >= 1 else { throw Violation(field: "\(field).seq", description: "seq starts at 1") }

        guard let android = message["android"]?.object, let priority = android["priority"]?.string, android["ttl"] != nil else {
            throw Violation(field: "message.android", description: "a countdown message needs android.priority and android.ttl")
        }
        if android["notification"] != nil {
            throw Violation(field: "message.android.notification", description: "a countdown message is a data message: no notification")
        }
        let collapseKey = android["collapse_key"]?.string
        if event == "end" {
            guard let reason = data["endedReason"]?.string, countdownEndReasons.contains(reason) else {
                throw Violation(field: "\(field).endedReason", description: "an end needs endedReason ready, started, cancelled or expired")
            }
            if collapseKey != nil {
                throw Violation(field: "message.android.collapse_key", description: "an end must not be collapsible (a device keeps only 4 collapse keys)")
            }
        } else if !(collapseKey ?? "").hasPrefix("countdown-") {
            throw Violation(field: "message.android.collapse_key", description: "a \(event) needs collapse_key countdown-<short hash of streamId>")
        }
        if event != "update" && priority != "HIGH" {
            throw Violation(field: "message.android.priority", description: "a \(event) goes with priority HIGH")
        }
        return "android_\(event)"
    }

    /// A non-negative decimal integer sent as a string.
    private static func decimal(_ value: JSONValue?, field: String) throws(Violation) -> Int64 {
        let text = try nonEmptyString(value, field: field)
        guard text.utf8.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int64(text) else {
            throw Violation(field: field, description: "must be a decimal integer string, got \"\(text)\"")
        }
        return number
    }
}

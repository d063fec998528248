import JSON

/// Record lines as the fake FCM writes them (`--record`), for the device model's unit tests. iOS starts and updates
/// carry `apns-expiration` = their planned start and `stale-date` = planned start + `stale`, as the payload builders
/// send them; Android starts and updates `staleAt`, `android.ttl` = seconds to the planned start and the countdown's
/// collapse key, ends `ttl` (default: until `staleAt`) and no collapse key.
enum DeviceModelRecords {
    /// `EXPIRE_AFTER_SECONDS` of the records: what `stale-date` / `staleAt` add to the planned start.
    static let stale = 6

    static func ios(_ event: String, _ stream: String, _ token: String, planned: Int? = nil, at: Double = 0, reason: String? = nil,
                    dismissal: Int? = nil, fcm: String = "fcm-1") -> JSONValue {
        var state: [String: JSONValue] = ["streamId": .string(stream), "scheduledStartAt": planned.map { .int($0) } ?? .null]
        var aps: [String: JSONValue] = ["event": .string(event), "timestamp": .int(Int(at))]
        var headers: [String: JSONValue] = ["apns-priority": "10"]
        if event == "start" {
            aps["attributes"] = ["streamId": .string(stream)]
        }
        if event != "end", let planned {
            headers["apns-expiration"] = .string(String(planned))
            aps["stale-date"] = .int(planned + stale)
        }
        if let reason {
            state["endedReason"] = .string(reason)
        }
        if event == "end" {
            aps["dismissal-date"] = .int(dismissal ?? Int(at) + 900)
        }
        aps["content-state"] = .object(state)
        return ["event": .string(event), "token": .string(fcm), "liveActivityToken": .string(token), "receivedAt": .number(at),
                "message": ["apns": ["headers": .object(headers), "payload": ["aps": .object(aps)]]]]
    }

    static func android(_ event: String, _ stream: String, _ fcm: String, seq: Int, planned: Int, at: Double = 0, reason: String? = nil,
                        ttl: Int? = nil) -> JSONValue {
        var data: [String: JSONValue] = ["streamId": .string(stream), "seq": .string(String(seq)), "scheduledStartAt": .string(String(planned))]
        var android: [String: JSONValue] = ["priority": "HIGH"]
        if let reason {
            data["endedReason"] = .string(reason)
        }
        if event == "end" {
            android["ttl"] = .string("\(ttl ?? max(1, planned + stale - Int(at)))s")
        } else {
            data["staleAt"] = .string(String(planned + stale))
            android["ttl"] = .string("\(ttl ?? max(1, planned - Int(at)))s")
            android["collapse_key"] = .string("countdown-" + stream)
        }
        return ["event": .string("android_" + event), "token": .string(fcm), "receivedAt": .number(at),
                "message": ["android": .object(android), "data": .object(data)]]
    }
}

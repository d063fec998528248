import JSON

/// Record lines as the fake FCM writes them (`--record`), for the device model's unit tests.
enum DeviceModelRecords {
    static func ios(_ event: String, _ stream: String, _ token: String, planned: Int? = nil, at: Double = 0, reason: String? = nil,
                    dismissal: Int? = nil, fcm: String = "fcm-1") -> JSONValue {
        var state: [String: JSONValue] = ["streamId": .string(stream), "scheduledStartAt": planned.map { .int($0) } ?? .null]
        var aps: [String: JSONValue] = ["event": .string(event), "timestamp": .int(Int(at))]
        if event == "start" {
            aps["attributes"] = ["streamId": .string(stream)]
        }
        if let reason {
            state["endedReason"] = .string(reason)
        }
        if reason != nil || dismissal != nil {
            aps["dismissal-date"] = .int(dismissal ?? Int(at) + 900)
        }
        aps["content-state"] = .object(state)
        return ["event": .string(event), "token": .string(fcm), "liveActivityToken": .string(token), "receivedAt": .number(at),
                "message": ["apns": ["payload": ["aps": .object(aps)]]]]
    }

    static func android(_ event: String, _ stream: String, _ fcm: String, seq: Int, planned: Int, at: Double = 0, reason: String? = nil) -> JSONValue {
        var data: [String: JSONValue] = ["streamId": .string(stream), "seq": .string(String(seq)), "scheduledStartAt": .string(String(planned))]
        if let reason {
            data["endedReason"] = .string(reason)
        }
        return ["event": .string("android_" + event), "token": .string(fcm), "receivedAt": .number(at), "message": ["data": .object(data)]]
    }
}

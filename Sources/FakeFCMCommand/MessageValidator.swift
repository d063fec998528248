import Foundation
import JSON

/// Checks a `messages:send` body the way FCM would, plus the project's own rules for Live Activity pushes
/// (known events, integer epoch seconds, the fields iOS needs to start an activity) and for the Android
/// countdown's data messages (`MessageValidator+Android.swift`).
enum MessageValidator {
    typealias Violation = GoogleErrorBody.FieldViolation

    static let messageFields: Set<String> = [
        "name", "token", "topic", "condition", "data", "notification", "android", "webpush", "apns", "fcm_options",
    ]
    static let liveActivityEvents: Set<String> = ["start", "update", "end"]
    /// Epoch seconds at or above this are milliseconds by mistake (year 5138).
    static let secondsCeiling: Int64 = 100_000_000_000

    static func validate(_ body: Data) throws(Violation) -> ValidatedMessage {
        guard let root = JSONValue.parse(body), let top = root.object else {
            throw Violation(field: "message", description: "Invalid JSON payload received. Expected a JSON object.")
        }
        for key in top.keys where key != "message" && key != "validate_only" {
            throw Violation(field: key, description: "Invalid JSON payload received. Unknown name \"\(key)\": Cannot find field.")
        }
        var validateOnly = false
        if let flag = top["validate_only"] {
            guard case .bool(let value) = flag else { throw typeViolation("validate_only", expected: "boolean", got: flag) }
            validateOnly = value
        }
        guard let messageValue = top["message"] else { throw Violation(field: "message", description: "message is required") }
        guard let message = messageValue.object else { throw typeViolation("message", expected: "object", got: messageValue) }
        for key in message.keys where !messageFields.contains(key) {
            throw Violation(
                field: "message.\(key)", description: "Invalid JSON payload received. Unknown name \"\(key)\" at 'message': Cannot find field.")
        }
        if message["topic"] != nil || message["condition"] != nil {
            throw Violation(field: "message.token", description: "only token targets are accepted (no topic or condition)")
        }
        let token = try nonEmptyString(message["token"], field: "message.token")
        try checkAndroidOptions(message["android"])
        try checkDataSize(message)
        if let data = message["data"] { try stringMap(data, field: "message.data") }
        let apns = try optionalObject(message["apns"], field: "message.apns")
        if let headers = apns?["headers"] {
            try stringMap(headers, field: "message.apns.headers")
            try checkAPNsHeaders(headers)
        }
        let notification = try optionalObject(message["notification"], field: "message.notification")
        if let notification {
            for key in ["title", "body", "image"] {
                if let value = notification[key], value.string == nil {
                    throw typeViolation("message.notification.\(key)", expected: "string", got: value)
                }
            }
        }

        guard let liveActivityTokenValue = apns?["live_activity_token"] else {
            guard notification != nil else {
                guard message["data"] != nil else {
                    throw Violation(field: "message", description: "a message needs a notification, data or apns.live_activity_token")
                }
                return ValidatedMessage(event: try dataMessageEvent(message), token: token, liveActivityToken: nil, validateOnly: validateOnly)
            }
            return ValidatedMessage(event: "notification", token: token, liveActivityToken: nil, validateOnly: validateOnly)
        }
        let liveActivityToken = try nonEmptyString(liveActivityTokenValue, field: "message.apns.live_activity_token")
        if notification != nil {
            throw Violation(field: "message.notification", description: "a Live Activity push must not also carry a notification")
        }
        let event = try checkLiveActivity(apns ?? [:])
        return ValidatedMessage(event: event, token: token, liveActivityToken: liveActivityToken, validateOnly: validateOnly)
    }

    /// `apns-expiration` is epoch seconds as a decimal string; `apns-collapse-id` at most 64 bytes (APNs' rules).
    private static func checkAPNsHeaders(_ headers: JSONValue) throws(Violation) {
        if let expiration = headers["apns-expiration"]?.string, expiration.isEmpty || !expiration.allSatisfy(\.isASCII) || !expiration.allSatisfy(\.isNumber) {
            throw Violation(field: "message.apns.headers.apns-expiration", description: "must be epoch seconds as a decimal string")
        }
        if let collapse = headers["apns-collapse-id"]?.string, collapse.utf8.count > 64 {
            throw Violation(field: "message.apns.headers.apns-collapse-id", description: "must be at most 64 bytes")
        }
    }

    /// Checks `apns.payload.aps` of a Live Activity push and returns its event.
    private static func checkLiveActivity(_ apns: [String: JSONValue]) throws(Violation) -> String {
        guard let payload = try optionalObject(apns["payload"], field: "message.apns.payload"),
            let aps = try optionalObject(payload["aps"], field: "message.apns.payload.aps")
        else {
            throw Violation(field: "message.apns.payload.aps", description: "a Live Activity push needs apns.payload.aps")
        }
        let field = "message.apns.payload.aps"
        let event = try nonEmptyString(aps["event"], field: "\(field).event")
        guard liveActivityEvents.contains(event) else {
            throw Violation(field: "\(field).event", description: "event must be start, update or end, got \"\(event)\"")
        }
        guard aps["timestamp"] != nil else { throw Violation(field: "\(field).timestamp", description: "timestamp is required") }
        for key in ["timestamp", "stale-date", "dismissal-date"] {
            try epochSeconds(aps[key], field: "\(field).\(key)")
        }
        guard let contentState = try optionalObject(aps["content-state"], field: "\(field).content-state") else {
            throw Violation(field: "\(field).content-state", description: "content-state is required")
        }
        for key in ["updatedAt", "scheduledStartAt"] {
            try epochSeconds(contentState[key], field: "\(field).content-state.\(key)")
        }
        if event == "start" {
            _ = try nonEmptyString(aps["attributes-type"], field: "\(field).attributes-type")
            guard try optionalObject(aps["attributes"], field: "\(field).attributes") != nil else {
                throw Violation(field: "\(field).attributes", description: "a start push needs attributes")
            }
            guard let alert = aps["alert"] else {
                throw Violation(field: "\(field).alert", description: "a start push needs an alert")
            }
            if alert.string == nil && alert.object == nil { throw typeViolation("\(field).alert", expected: "object", got: alert) }
        }
        return event
    }

    private static func epochSeconds(_ value: JSONValue?, field: String) throws(Violation) {
        guard let value else { return }
        guard let seconds = value.int else { throw typeViolation(field, expected: "integer (epoch seconds)", got: value) }
        guard seconds >= 0 && seconds < secondsCeiling else {
            throw Violation(field: field, description: "\(seconds) is not epoch seconds (milliseconds?)")
        }
    }

    static func nonEmptyString(_ value: JSONValue?, field: String) throws(Violation) -> String {
        guard let value else { throw Violation(field: field, description: "\(field) is required") }
        guard let text = value.string else { throw typeViolation(field, expected: "string", got: value) }
        guard !text.isEmpty else { throw Violation(field: field, description: "\(field) must not be empty") }
        return text
    }

    static func optionalObject(_ value: JSONValue?, field: String) throws(Violation) -> [String: JSONValue]? {
        guard let value else { return nil }
        guard let object = value.object else { throw typeViolation(field, expected: "object", got: value) }
        return object
    }

    static func stringMap(_ value: JSONValue, field: String) throws(Violation) {
        guard let object = value.object else { throw typeViolation(field, expected: "object", got: value) }
        for (key, entry) in object where entry.string == nil {
            throw Violation(field: "\(field).\(key)", description: "values of \(field) must be strings, got \(entry.typeName)")
        }
    }

    static func typeViolation(_ field: String, expected: String, got value: JSONValue) -> Violation {
        Violation(field: field, description: "Invalid value at '\(field)': expected \(expected), got \(value.typeName)")
    }
}

import Foundation

/// One accepted message as `GET /fake/messages` and the record file show it.
struct RecordedMessage: Encodable, Sendable {
    /// Everything about the message but its content.
    struct Summary: Sendable {
        /// Increases by one per accepted message, across resets; page with `?since=<seq>`.
        let seq: Int
        /// Epoch seconds with milliseconds.
        let receivedAt: Double
        let project: String
        /// `projects/<project>/messages/<id>`, as answered.
        let name: String
        let event: String
        let token: String
        let liveActivityToken: String?
    }

    let summary: Summary
    let message: JSONValue

    private enum CodingKeys: String, CodingKey { case seq, receivedAt, project, name, event, token, liveActivityToken, message }

    /// The record file's line (without the newline): the same JSON as `encode(to:)` with sorted keys.
    var jsonLine: String {
        var out = "{\"event\":" + JSONText.quote(summary.event)
        if let liveActivityToken = summary.liveActivityToken { out += ",\"liveActivityToken\":" + JSONText.quote(liveActivityToken) }
        out += ",\"message\":"
        message.write(into: &out)
        out += ",\"name\":" + JSONText.quote(summary.name) + ",\"project\":" + JSONText.quote(summary.project)
        out += ",\"receivedAt\":" + String(summary.receivedAt) + ",\"seq\":" + String(summary.seq)
        out += ",\"token\":" + JSONText.quote(summary.token) + "}"
        return out
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(summary.seq, forKey: .seq)
        try container.encode(summary.receivedAt, forKey: .receivedAt)
        try container.encode(summary.project, forKey: .project)
        try container.encode(summary.name, forKey: .name)
        try container.encode(summary.event, forKey: .event)
        try container.encode(summary.token, forKey: .token)
        try container.encodeIfPresent(summary.liveActivityToken, forKey: .liveActivityToken)
        try container.encode(message, forKey: .message)
    }
}

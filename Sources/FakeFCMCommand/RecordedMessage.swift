import Foundation
import JSON

/// One accepted message as `GET /fake/messages` and the record file show it.
struct RecordedMessage: Encodable, Sendable {
    /// Everything about the message but its content.
    struct Summary: Encodable, Sendable {
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

    private enum CodingKeys: String, CodingKey { case message }

    /// The record file's line, newline included, built from the request body as received: the summary's
    /// fields, then the body's own fields (`message`, as sent). Re-encoding every message cost a third of the
    /// fake's CPU under load. Line breaks in the body can only be whitespace (JSON escapes them in strings).
    static func recordLine(_ summary: Summary, body: Data) -> [UInt8] {
        var head = "{\"event\":" + JSONString.quoted(summary.event)
        if let liveActivityToken = summary.liveActivityToken { head += ",\"liveActivityToken\":" + JSONString.quoted(liveActivityToken) }
        head += ",\"name\":" + JSONString.quoted(summary.name) + ",\"project\":" + JSONString.quoted(summary.project)
        head += ",\"receivedAt\":" + String(summary.receivedAt) + ",\"seq\":" + String(summary.seq)
        head += ",\"token\":" + JSONString.quoted(summary.token) + ","
        var line = Array(head.utf8)
        line.reserveCapacity(line.count + body.count + 1)
        let start = body.firstIndex { $0 == UInt8(ascii: "{") }.map { body.index(after: $0) } ?? body.endIndex
        let copied = line.count
        line.append(contentsOf: body[start...])
        // One line per message: a body's own line breaks become spaces.
        for index in copied..<line.count where line[index] == 0x0A || line[index] == 0x0D { line[index] = 0x20 }
        line.append(0x0A)
        return line
    }

    /// The summary's fields beside `message`.
    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(message, forKey: .message)
    }
}

import Foundation
import JSON

/// One accepted message as `GET /fake/messages` and the record file show it.
struct RecordedMessage: Encodable, Sendable {
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
    /// The request's `message`, as sent; nil while kept (the request body is kept instead, much smaller).
    var message: JSONValue?

    /// The record file's line, newline included, built from the request body as received: the fields but
    /// `message`, then the body's own fields (`message`, as sent). Re-encoding every message cost a third of the
    /// fake's CPU under load. Line breaks in the body can only be whitespace (JSON escapes them in strings).
    func recordLine(body: Data) -> [UInt8] {
        var head = "{\"event\":" + JSONString.quoted(event)
        if let liveActivityToken { head += ",\"liveActivityToken\":" + JSONString.quoted(liveActivityToken) }
        head += ",\"name\":" + JSONString.quoted(name) + ",\"project\":" + JSONString.quoted(project)
        head += ",\"receivedAt\":" + String(receivedAt) + ",\"seq\":" + String(seq)
        head += ",\"token\":" + JSONString.quoted(token) + ","
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
}

import Foundation
import PushPayloads

/// Shared inputs: the stream of the mobile contract's example, 45 minutes (minus 30 s) before its start.
enum Fixtures {
    static let plannedStart = Date(timeIntervalSince1970: 1_776_708_000)
    static let startNow = Date(timeIntervalSince1970: 1_776_705_330)
    static let stream = StreamSnapshot(
        id: "65f000000000000000000001", title: "Akşam Sohbeti: Swift & \"Vapor\"", plannedStartAt: plannedStart,
        creatorName: "Selin Kaya", guestNames: ["Mert Demir", "Ayşe Yılmaz"])

    static func builder(_ settings: PayloadSettings = PayloadSettings()) -> PushPayloadBuilder {
        // The default settings are valid; a failure here is a test bug.
        try! PushPayloadBuilder(settings: settings)
    }

    static func stream(title: String, creator: String = "Selin Kaya", guests: [String] = ["Mert Demir"]) -> StreamSnapshot {
        StreamSnapshot(id: stream.id, title: title, plannedStartAt: plannedStart, creatorName: creator, guestNames: guests)
    }
}

/// The payload parsed back with Foundation, untyped.
struct ParsedAPS {
    let aps: [String: Any]

    init(_ payload: LiveActivityPayload) throws {
        let root = try JSONSerialization.jsonObject(with: Data(payload.apsJSON)) as? [String: Any]
        guard let aps = root?["aps"] as? [String: Any], root?.count == 1 else { throw ParseFailure() }
        self.aps = aps
    }

    var attributes: [String: Any] { aps["attributes"] as? [String: Any] ?? [:] }
    var contentState: [String: Any] { aps["content-state"] as? [String: Any] ?? [:] }
    var alert: [String: Any] { aps["alert"] as? [String: Any] ?? [:] }

    struct ParseFailure: Error {}
}

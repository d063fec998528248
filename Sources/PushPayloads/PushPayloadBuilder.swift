import Foundation

/// Builds the Live Activity start, update and end payloads and the reminder notification (SPEC §6). Pure:
/// no I/O, time comes in as `now`, the same inputs always give the same bytes.
///
/// Size guarantee: every `apsJSON` is at most `LiveActivityPayload.maxAPSBytes` (4096) bytes, so attributes and
/// content-state are each well under 4 KB too. When the stream title and participant names do not fit, the room
/// is split fairly between the two: the title is cut on a grapheme boundary with "…", trailing names are
/// replaced by a "…" item. Each display name is first capped at `maxNameBytes` (grapheme boundary, "…"), so
/// one very long name cannot hide the others. `creatorName` joins the names with " • ".
public struct PushPayloadBuilder: Sendable {
    /// The longest stream id accepted, in UTF-8 bytes (ids are ObjectIds or UUIDs in practice).
    public static let maxStreamIdBytes = 128
    /// The longest single display name kept before names are joined, in JSON-escaped UTF-8 bytes.
    public static let maxNameBytes = 128
    /// The longest stream title used in a reminder notification body, in JSON-escaped UTF-8 bytes.
    public static let maxReminderTitleBytes = 512

    public let settings: PayloadSettings

    /// Throws when `settings` are invalid (see `PayloadSettings.validate()`).
    public init(settings: PayloadSettings = PayloadSettings()) throws(PushPayloadError) {
        try settings.validate()
        self.settings = settings
    }

    /// `<scheme>://live-stream/<id>` with the id percent-encoded as a path segment.
    public func streamLink(_ streamId: String) -> String {
        "\(settings.deepLinkScheme)://live-stream/\(Self.percentEncodedSegment(streamId))"
    }

    /// `<scheme>://home`.
    public var homeLink: String { "\(settings.deepLinkScheme)://home" }

    /// Whole minutes left until `start`, rounded up (so at least 1); nil once `start` has come.
    public static func minutesLeft(until start: Date, now: Date) -> Int? {
        let seconds = start.timeIntervalSince(now)
        guard seconds > 0 else { return nil }
        return max(1, Int((seconds / 60).rounded(.up)))
    }

    /// Epoch seconds, rounded down.
    static func epochSeconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }

    func checkedStreamId(_ stream: StreamSnapshot) throws(PushPayloadError) -> String {
        let size = stream.id.utf8.count
        guard size > 0, size <= Self.maxStreamIdBytes else {
            throw PushPayloadError(.invalidStreamId, "stream id of \(size) bytes (1…\(Self.maxStreamIdBytes) allowed)",
                                   streamId: String(stream.id.prefix(Self.maxStreamIdBytes)))
        }
        return stream.id
    }

    /// The stream title to show: trimmed, or the localized "Live stream" when empty.
    func displayTitle(_ stream: StreamSnapshot, _ texts: LocalizedTexts) -> String {
        let title = TextFitting.trimmed(stream.title)
        return title.isEmpty ? texts.untitledStream : title
    }

    /// The creator's then the guests' display names, trimmed, empty ones left out, each capped.
    func participantNames(_ stream: StreamSnapshot) -> [String] {
        var names: [String] = []
        names.reserveCapacity(stream.guestNames.count + 1)
        func add(_ name: String) {
            let capped = TextFitting.truncate(TextFitting.trimmed(name), toEscapedBytes: Self.maxNameBytes)
            if !capped.isEmpty { names.append(capped) }
        }
        add(stream.creatorName)
        stream.guestNames.forEach(add)
        return names
    }

    /// How many leading non-blank display names (the creator's, then the guests' in order) decide every Live Activity
    /// and Android countdown payload: joined, each at least one byte and separated by the 5-byte " • ", they are
    /// longer than a whole payload, so every name after them is always replaced by the "…" item. A stream with
    /// thousands of guests needs only its first names read (`leadingNamesDecide`).
    public static let decidingNameCount: Int = {
        let separator = PayloadFitting.separator.utf8.count
        return (max(LiveActivityPayload.maxAPSBytes, AndroidCountdownMessage.maxDataBytes) + separator) / (separator + 1) + 1
    }()

    /// True when `stream`'s names (its creator and first guests) hold `decidingNameCount` non-blank ones: a snapshot
    /// with only those builds the same payloads as one with every guest.
    public static func leadingNamesDecide(_ stream: StreamSnapshot) -> Bool {
        var nonBlank = TextFitting.trimmed(stream.creatorName).isEmpty ? 0 : 1
        for name in stream.guestNames where nonBlank < decidingNameCount {
            if !TextFitting.trimmed(name).isEmpty { nonBlank += 1 }
        }
        return nonBlank >= decidingNameCount
    }

    /// Checks the stream's id and trims and caps its texts once, for every payload built from it. Throws
    /// `invalidStreamId` as the builders do.
    public func prepare(_ stream: StreamSnapshot) throws(PushPayloadError) -> PreparedStream {
        PreparedStream(snapshot: stream, streamId: try checkedStreamId(stream), title: TextFitting.trimmed(stream.title),
                       names: participantNames(stream))
    }

    private static func percentEncodedSegment(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            let unreserved = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved {
                out.append(byte)
            } else {
                out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

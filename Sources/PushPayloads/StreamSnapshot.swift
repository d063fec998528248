import Foundation

/// What the payload builders need to know about a stream, read from PostgreSQL at send time.
public struct StreamSnapshot: Sendable, Equatable {
    /// The stream id; also the path of its deep link (non-empty, at most 128 UTF-8 bytes).
    public var id: String
    public var title: String
    public var plannedStartAt: Date
    /// The creator's display name ("" when the stream has no creator row).
    public var creatorName: String
    /// The guests' display names ordered by `stream_participants.position`.
    public var guestNames: [String]

    public init(id: String, title: String, plannedStartAt: Date, creatorName: String, guestNames: [String] = []) {
        self.id = id
        self.title = title
        self.plannedStartAt = plannedStartAt
        self.creatorName = creatorName
        self.guestNames = guestNames
    }
}

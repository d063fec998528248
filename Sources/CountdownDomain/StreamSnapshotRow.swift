import Foundation
import PushPayloads

/// A stream as the payload builders need it, plus PostgreSQL's `now()` and its status.
public struct StreamSnapshotRow: Sendable {
    public var snapshot: StreamSnapshot
    public var status: StreamStatus
    public var now: Date
    /// Role per participant user id (a snapshot read with only its leading participants holds theirs, and those of
    /// the users its reader pushes to).
    public var roles: [String: ParticipantRole]
    /// People waiting for the stream (`ViewerCountQuery`), filled where Live Activity payloads are built.
    public var viewerCount = 0

    public init(snapshot: StreamSnapshot, status: StreamStatus, now: Date, roles: [String: ParticipantRole], viewerCount: Int = 0) {
        self.snapshot = snapshot
        self.status = status
        self.now = now
        self.roles = roles
        self.viewerCount = viewerCount
    }
}

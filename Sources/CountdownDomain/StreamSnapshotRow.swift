import Foundation
import PushPayloads

/// A stream as the payload builders need it, plus PostgreSQL's `now()` and its status.
public struct StreamSnapshotRow: Sendable {
    public var snapshot: StreamSnapshot
    public var status: StreamStatus
    public var now: Date
    /// Role per participant user id.
    public var roles: [String: ParticipantRole]

    public init(snapshot: StreamSnapshot, status: StreamStatus, now: Date, roles: [String: ParticipantRole]) {
        self.snapshot = snapshot
        self.status = status
        self.now = now
        self.roles = roles
    }
}

/// The target user's role in the stream (`stream_participants.role`).
public enum ParticipantRole: String, Sendable, Equatable, CaseIterable {
    case creator
    case guest
}

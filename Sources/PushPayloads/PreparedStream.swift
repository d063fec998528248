/// A stream's texts as every Live Activity payload of it uses them: the id checked, the title trimmed, the
/// participants' names trimmed and capped. `PushPayloadBuilder.prepare` makes one; a fan-out that builds a payload
/// per role and language prepares its stream once.
public struct PreparedStream: Sendable, Equatable {
    public let snapshot: StreamSnapshot
    let streamId: String
    /// Trimmed; empty when the stream has no title (each payload then shows its language's "Live stream").
    let title: String
    let names: [String]
}

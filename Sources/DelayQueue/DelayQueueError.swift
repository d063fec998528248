/// Failures of the delay queue.
public struct DelayQueueError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// A job to enqueue is malformed (empty id, oversized payload, …).
        case invalidJob
        /// An argument is out of range (non-positive claim size or lease).
        case invalidArgument
        /// Redis answered in an unexpected shape (a different script version, a foreign key).
        case unexpectedReply
    }

    public let code: Code
    public let message: String
    /// The job id concerned, when there is one.
    public let id: String?

    public init(_ code: Code, _ message: String, id: String? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }

    public var description: String {
        "delay queue \(code.rawValue)\(id.map { " (job \($0))" } ?? ""): \(message)"
    }
}

/// Why a payload could not be built.
public struct PushPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// A `PayloadSettings` value is unusable (named in `what`).
        case invalidSettings
        /// The stream id is empty or longer than `PushPayloadBuilder.maxStreamIdBytes`.
        case invalidStreamId
        /// Even with title and names shortened to nothing the payload would exceed its limit.
        case payloadTooLarge
    }

    public var code: Code
    /// What was wrong, e.g. "deepLinkScheme \"a b\" is not a URL scheme".
    public var what: String
    /// The stream the payload was for, when there was one.
    public var streamId: String?

    public init(_ code: Code, _ what: String, streamId: String? = nil) {
        self.code = code
        self.what = what
        self.streamId = streamId
    }

    public var description: String {
        "\(code.rawValue): \(what)" + (streamId.map { " (stream \($0))" } ?? "")
    }
}

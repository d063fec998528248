/// Why a push transport could not be set up or authenticate.
public struct PushError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// A credentials file (service account JSON, APNs .p8) is missing, unreadable or malformed.
        case invalidCredentials
        /// A setting is missing or wrong (project id, key id, base URL, ...).
        case invalidConfiguration
        /// The OAuth token endpoint refused the service account's assertion (fix the credentials).
        case tokenRejected
        /// The OAuth token endpoint could not be reached or failed temporarily (retry later).
        case tokenEndpointUnavailable
    }

    public let code: Code
    public let message: String
    /// The file the problem is in, when there is one.
    public let file: String?
    /// The field or setting at fault, when there is one.
    public let field: String?

    public init(_ code: Code, _ message: String, file: String? = nil, field: String? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.field = field
    }

    public var description: String {
        var text = "\(code.rawValue): "
        if let file { text += "\(file): " }
        if let field { text += "field \(field): " }
        return text + message
    }
}

/// Every answer of the API that is not a success: a code clients can branch on, the HTTP status it maps to,
/// a message for people, and the request field concerned (for validation errors).
public struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        /// 400: the body is not JSON, or not a JSON object.
        case malformedJSON = "malformed_json"
        /// 400: a field has the wrong JSON type.
        case wrongType = "wrong_type"
        /// 400: the request's framing is ambiguous (`Content-Length` with `Transfer-Encoding`, or repeated); the
        /// connection is closed.
        case badRequest = "bad_request"
        /// 401: no, or no valid, bearer token.
        case unauthorized
        /// 403: the caller may not do this.
        case forbidden
        /// 403: the token's user is not in `users` (nothing is created for it).
        case unknownUser = "unknown_user"
        /// 404: no such route.
        case notFound = "not_found"
        /// 404: no device with this id.
        case deviceNotFound = "device_not_found"
        /// 404: no stream with this id.
        case streamNotFound = "stream_not_found"
        /// 405: the route exists, the method does not.
        case methodNotAllowed = "method_not_allowed"
        /// 409: the stream is already `ready`, `started`, `cancelled` or `expired`.
        case streamAlreadyEnded = "stream_already_ended"
        /// 413: the body is over the limit.
        case payloadTooLarge = "payload_too_large"
        /// 431: the request's headers are over the limit.
        case headersTooLarge = "headers_too_large"
        /// 415: the body is not `application/json`.
        case unsupportedMediaType = "unsupported_media_type"
        /// 422: a field breaks a rule (missing, too long, wrong format).
        case invalidField = "invalid_field"
        /// 429: too many writes from this user or address; `Retry-After` says when to try again.
        case rateLimited = "rate_limited"
        /// 503: PostgreSQL cannot be reached, or the server is not ready; `Retry-After` is set.
        case unavailable
        /// 503: the request was not answered within its deadline (or waited too long for a lock); it may or
        /// may not have taken effect, and every write is safe to repeat. `Retry-After` is set.
        case timeout
        /// 500: anything unexpected (details are logged, not returned).
        case internalError = "internal_error"

        /// The HTTP status this code is answered with.
        public var status: Int {
            switch self {
            case .malformedJSON, .wrongType, .badRequest: 400
            case .unauthorized: 401
            case .forbidden, .unknownUser: 403
            case .notFound, .deviceNotFound, .streamNotFound: 404
            case .methodNotAllowed: 405
            case .streamAlreadyEnded: 409
            case .payloadTooLarge: 413
            case .unsupportedMediaType: 415
            case .headersTooLarge: 431
            case .invalidField: 422
            case .rateLimited: 429
            case .internalError: 500
            case .unavailable, .timeout: 503
            }
        }
    }

    public let code: Code
    public let message: String
    /// The body field (or path parameter) the error is about.
    public let field: String?
    /// Seconds for the `Retry-After` header (429 and 503).
    public let retryAfterSeconds: Int?

    public init(_ code: Code, _ message: String, field: String? = nil, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.retryAfterSeconds = retryAfterSeconds ?? (code.status == 503 ? Self.defaultRetryAfterSeconds : nil)
    }

    /// `Retry-After` of a 503 that does not say otherwise.
    public static let defaultRetryAfterSeconds = 2

    /// A 422 naming `field`.
    public static func invalid(_ field: String, _ message: String) -> APIError {
        APIError(.invalidField, "\(field): \(message)", field: field)
    }

    public var description: String { "\(code.rawValue) (\(code.status)): \(message)" }
}

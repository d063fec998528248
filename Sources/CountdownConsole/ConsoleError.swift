import Foundation

/// The console's one error type: a code that decides the HTTP status, and a message safe to show the operator.
public struct ConsoleError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        case unauthorized, forbidden, notFound, badRequest, tooMany, rateLimited, methodNotAllowed, internalError

        /// The HTTP status of the code.
        public var status: Int {
            switch self {
            case .unauthorized: 401
            case .forbidden: 403
            case .notFound: 404
            case .badRequest: 400
            case .tooMany: 409
            case .rateLimited: 429
            case .methodNotAllowed: 405
            case .internalError: 500
            }
        }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

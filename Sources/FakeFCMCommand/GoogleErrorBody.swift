import Foundation
import HTTPServer

/// Error answers shaped like Google's: OAuth token errors and FCM v1 `google.rpc.Status` errors.
enum GoogleErrorBody {
    /// One `google.rpc.BadRequest` field violation.
    struct FieldViolation: Error, Sendable, Equatable {
        let field: String
        let description: String
    }

    /// `{"error": "...", "error_description": "..."}` as the OAuth token endpoint answers.
    static func oauth(_ error: String, _ description: String, status: Int = 400) -> HTTPResponse {
        var response = HTTPResponse.json(object: ["error": error, "error_description": description], status: status)
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// `{"error": {"code", "message", "status", "details": [FcmError, BadRequest?]}}` as FCM v1 answers.
    /// `errorCode` nil leaves out the FcmError detail (FCM sends none for plain authentication failures).
    static func fcm(
        status: Int, errorCode: String?, message: String, violation: FieldViolation? = nil, retryAfter: String? = nil
    ) -> HTTPResponse {
        var details: [[String: Any]] = []
        if let errorCode {
            details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode])
        }
        if let violation {
            details.append([
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [["field": violation.field, "description": violation.description]],
            ])
        }
        var error: [String: Any] = ["code": status, "message": message, "status": rpcStatus(for: status)]
        if !details.isEmpty { error["details"] = details }
        var response = HTTPResponse.json(object: ["error": error], status: status)
        if let retryAfter { response.headers["Retry-After"] = retryAfter }
        if status == 401 { response.headers["WWW-Authenticate"] = #"Bearer realm="https://accounts.google.com/""# }
        return response
    }

    /// The `google.rpc.Code` name FCM puts in `error.status` for an HTTP status.
    static func rpcStatus(for status: Int) -> String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 409: "ABORTED"
        case 429: "RESOURCE_EXHAUSTED"
        case 499: "CANCELLED"
        case 501: "UNIMPLEMENTED"
        case 503: "UNAVAILABLE"
        case 504: "DEADLINE_EXCEEDED"
        case 500...599: "INTERNAL"
        default: "UNKNOWN"
        }
    }

    /// The FcmError code FCM pairs with an HTTP status when a fault names none.
    static func defaultErrorCode(for status: Int) -> String? {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: nil
        case 403: "SENDER_ID_MISMATCH"
        case 404: "UNREGISTERED"
        case 429: "QUOTA_EXCEEDED"
        case 503: "UNAVAILABLE"
        case 500...599: "INTERNAL"
        default: "UNSPECIFIED_ERROR"
        }
    }

    /// FCM's usual message text for an error code.
    static func defaultMessage(status: Int, errorCode: String?) -> String {
        switch errorCode {
        case "UNREGISTERED": "Requested entity was not found."
        case "QUOTA_EXCEEDED": "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'."
        case "UNAVAILABLE": "The service is currently unavailable."
        case "INTERNAL": "Internal error encountered."
        case "SENDER_ID_MISMATCH": "SenderId mismatch"
        case "THIRD_PARTY_AUTH_ERROR": "Auth error from APNS or Web Push Service"
        case "INVALID_ARGUMENT": "Request contains an invalid argument."
        default:
            status == 401
                ? "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
                : "Injected failure."
        }
    }
}

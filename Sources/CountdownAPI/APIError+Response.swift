import HTTPServer

extension APIError {
    /// The JSON body every error is answered with.
    struct Body: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
            let field: String?
        }

        let success = false
        let error: Detail
    }

    /// `{"success": false, "error": {"code", "message", "field"?}}` with the code's status.
    public var response: HTTPResponse {
        var response = HTTPResponse.json(Body(error: .init(code: code.rawValue, message: message, field: field)), status: code.status)
        if code == .unauthorized { response.headers["WWW-Authenticate"] = "Bearer" }
        if code == .payloadTooLarge || code == .headersTooLarge { response.headers["Connection"] = "close" }
        if let retryAfterSeconds { response.headers["Retry-After"] = String(max(1, retryAfterSeconds)) }
        return response
    }
}

/// The options of an easy handle that stay the same from one request to the next of a kind (a push sender's
/// requests differ only in their bodies): the URL, the method, whether there is a body, and the timeout. With the
/// same header list (by identity), a handle already set for a shape is used again without `curl_easy_reset`.
struct EasyShape: Equatable {
    var url: String
    var method: HTTPRequest.Method
    var hasBody: Bool
    var timeoutMilliseconds: Int

    init(_ request: HTTPRequest, timeoutMilliseconds: Int) {
        url = request.url
        method = request.method
        hasBody = !request.body.isEmpty
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Whether requests of this shape send a body (libcurl's `POST` options), as against a GET or HEAD.
    var sendsBody: Bool {
        switch method {
        case .get where !hasBody, .head: false
        default: true
        }
    }
}

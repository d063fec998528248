import HTTPTypes

/// The header list of the last request, reused while requests carry the same header fields: a push sender's
/// requests differ only in their bodies until its access token changes. Each transfer keeps the list it was given
/// alive until it ends. Touched only on the transfer thread.
struct HeaderListCache {
    private var last: (headers: HTTPHeaders, hasBody: Bool, list: CurlHeaderList)?

    mutating func list(for request: HTTPRequest) throws -> CurlHeaderList {
        let hasBody = !request.body.isEmpty
        if let last, last.hasBody == hasBody, last.headers == request.headers { return last.list }
        let list = try EasyConfigurator.headerList(for: request)
        last = (request.headers, hasBody, list)
        return list
    }
}

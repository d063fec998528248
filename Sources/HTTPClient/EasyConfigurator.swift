import CCurl
import HTTPTypes

/// Sets an easy handle's options for one request: URL, method, body, headers, timeouts, protocol, callbacks.
///
/// A handle last set for a request of the same `EasyShape` and header list keeps its options, and only the body and
/// the callbacks' context change: a push sender's requests differ only in their bodies, and resetting the handle
/// and copying every option again was a hundred allocator calls per push.
struct EasyConfigurator {
    let configuration: HTTPClientConfiguration
    let sockets: SocketRegistry

    func configure(_ easy: CurlEasy, for transfer: Transfer, headers: CurlHeaderList) throws {
        let request = transfer.request
        let shape = EasyShape(request, timeoutMilliseconds: (request.timeout ?? configuration.requestTimeout).curlMilliseconds)
        if easy.shape != shape || easy.headerList !== headers {
            easy.reset()
            try configureShape(easy, shape, headers: headers)
        }
        let context = UnsafeRawPointer(Unmanaged.passUnretained(transfer).toOpaque())
        try easy.set(CURLOPT_WRITEDATA, pointer: context)
        try easy.set(CURLOPT_HEADERDATA, pointer: context)
        if shape.sendsBody {
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(request.body.count))
            // COPYPOSTFIELDS copies the bytes, so the request may be released while the transfer runs.
            try request.body.withUnsafeBytes { bytes in
                try easy.set(CURLOPT_COPYPOSTFIELDS, pointer: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
            }
        }
    }

    /// Every option but the body and the callbacks' context; records `shape` once all are set.
    private func configureShape(_ easy: CurlEasy, _ shape: EasyShape, headers: CurlHeaderList) throws {
        guard shape.url.hasPrefix("http://") || shape.url.hasPrefix("https://") else {
            throw HTTPClientError(.invalidRequest, "only absolute http:// and https:// URLs are supported")
        }
        try easy.set(CURLOPT_NOSIGNAL, 1)
        let url = try CurlURL(shape.url)
        easy.url = url
        try easy.set(CURLOPT_CURLU, pointer: UnsafeRawPointer(url.handle))
        try easy.set(CURLOPT_ERRORBUFFER, pointer: easy.errorBuffer)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout.curlMilliseconds)
        try easy.set(CURLOPT_TIMEOUT_MS, shape.timeoutMilliseconds)
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        try easy.set(CURLOPT_TCP_NODELAY, 1)
        try sockets.install(on: easy)
        if let caFile = configuration.caFile { try easy.set(CURLOPT_CAINFO, caFile) }
        try easy.set(CURLOPT_PROXY, configuration.proxy.proxy(for: shape.url))
        try easy.set(CURLOPT_NOPROXY, configuration.proxy.noProxy ?? "")
        try configureProtocol(easy, url: shape.url)
        try configureMethod(easy, shape)
        easy.headerList = headers
        try easy.set(CURLOPT_HTTPHEADER, pointer: headers.head)
        try configureCallbacks(easy)
        easy.shape = shape
    }

    private func configureProtocol(_ easy: CurlEasy, url: String) throws {
        switch configuration.httpVersion {
        case .automatic:
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            // Wait for a connection that may multiplex rather than open another one (matters only for HTTP/2).
            if url.hasPrefix("https://") { try easy.set(CURLOPT_PIPEWAIT, 1) }
        case .http1:
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
    }

    private func configureMethod(_ easy: CurlEasy, _ shape: EasyShape) throws {
        guard shape.sendsBody else {
            try easy.set(shape.method == .head ? CURLOPT_NOBODY : CURLOPT_HTTPGET, 1)
            return
        }
        if shape.method != .post { try easy.set(CURLOPT_CUSTOMREQUEST, shape.method.rawValue) }
        try easy.set(CURLOPT_POST, 1)
    }

    /// The request's header lines (checked for forbidden characters), with an empty `Expect` when it has a body.
    static func headerList(for request: HTTPRequest) throws -> CurlHeaderList {
        let list = CurlHeaderList()
        for field in request.headers {
            try validate(field)
            // "Name;" sends an empty value (plain "Name:" would remove a header libcurl adds).
            try list.append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        if !request.body.isEmpty && request.headers["Expect"] == nil { try list.append("Expect:") }
        return list
    }

    private static func validate(_ field: HTTPHeaders.Field) throws {
        let nameIsToken = !field.name.isEmpty && field.name.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ":")
        }
        let valueIsClean = field.value.utf8.allSatisfy { $0 != 0x0D && $0 != 0x0A && $0 != 0 }
        guard nameIsToken && valueIsClean else {
            throw HTTPClientError(.invalidRequest, "header \"\(field.name)\" has a forbidden character (CR, LF, NUL, ':' or space)")
        }
    }

    private func configureCallbacks(_ easy: CurlEasy) throws {
        // The context (`CURLOPT_WRITEDATA`, `CURLOPT_HEADERDATA`) is each transfer's; the engine keeps the transfer
        // alive while libcurl may call these.
        try Curl.check(countdown_curl_easy_setopt_write(easy.handle) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.appendBody(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }, "setting the write callback")
        try Curl.check(countdown_curl_easy_setopt_header(easy.handle) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            transfer.appendHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }, "setting the header callback")
    }
}

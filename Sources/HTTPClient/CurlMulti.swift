import CCurl

/// Owner of one libcurl multi handle (`CURLM *`); `deinit` runs `curl_multi_cleanup`.
final class CurlMulti {
    let handle: UnsafeMutableRawPointer
    /// Where its connections' sockets are opened and closed: kept until after `curl_multi_cleanup`, which closes
    /// the cached connections through it.
    let sockets: SocketRegistry

    init(configuration: HTTPClientConfiguration, sockets: SocketRegistry) throws {
        self.sockets = sockets
        try Curl.ensureGlobalInit()
        guard let handle = curl_multi_init() else { throw HTTPClientError(.other, "curl_multi_init failed") }
        self.handle = handle
        try set(CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        try set(CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxConnections)
        try set(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        try set(CURLMOPT_MAXCONNECTS, configuration.maxConnections)
    }

    deinit { curl_multi_cleanup(handle) }

    func set(_ option: CURLMoption, _ value: Int) throws {
        try Curl.check(countdown_curl_multi_setopt_long(handle, option, value), "setting multi option \(option.rawValue)")
    }
}

import CCurl

/// Owner of one parsed URL (`CURLU *`); `deinit` runs `curl_url_cleanup`.
///
/// Given to a handle as `CURLOPT_CURLU`, it spares libcurl parsing the URL string and writing it back normalized
/// for every transfer (it copies the parsed parts instead).
final class CurlURL {
    let handle: OpaquePointer

    /// Parses `url` as libcurl would for a transfer; a URL it refuses is an `.invalidRequest`.
    init(_ url: String) throws {
        guard let handle = curl_url() else { throw HTTPClientError(.other, "curl_url failed") }
        let code = url.withCString { curl_url_set(handle, CURLUPART_URL, $0, 0) }
        guard code == CURLUE_OK else {
            curl_url_cleanup(handle)
            throw HTTPClientError(.invalidRequest, "the URL cannot be parsed: \(String(cString: curl_url_strerror(code)))", url: url)
        }
        self.handle = handle
    }

    deinit { curl_url_cleanup(handle) }
}

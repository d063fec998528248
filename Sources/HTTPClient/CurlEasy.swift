import CCurl

/// Owner of one libcurl easy handle (`CURL *`) and of what its options point at; `deinit` runs `curl_easy_cleanup`.
///
/// A handle keeps its options between transfers: the next request with the same `EasyShape` sets only its body and
/// callback context (`EasyConfigurator`).
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    /// libcurl's words about the failure of the handle's transfer (`CURLOPT_ERRORBUFFER`; libcurl empties it as
    /// each transfer starts).
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// What the handle's options are set for; nil after `reset()`.
    var shape: EasyShape?
    /// The header list `CURLOPT_HTTPHEADER` points at, kept alive while the handle may use it.
    var headerList: CurlHeaderList?
    /// The parsed URL `CURLOPT_CURLU` points at, kept alive while the handle may use it.
    var url: CurlURL?

    init() throws {
        try Curl.ensureGlobalInit()
        guard let handle = curl_easy_init() else { throw HTTPClientError(.other, "curl_easy_init failed") }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) throws {
        try Curl.check(countdown_curl_easy_setopt_long(handle, option, value), "setting option \(option.rawValue)")
    }

    func set(_ option: CURLoption, _ value: String) throws {
        // libcurl copies string options (all but POSTFIELDS, which is never set here).
        try value.withCString { try Curl.check(countdown_curl_easy_setopt_ptr(handle, option, $0), "setting option \(option.rawValue)") }
    }

    func set(_ option: CURLoption, pointer: UnsafeRawPointer?) throws {
        try Curl.check(countdown_curl_easy_setopt_ptr(handle, option, pointer), "setting option \(option.rawValue)")
    }

    func set(_ option: CURLoption, offset: Int64) throws {
        try Curl.check(countdown_curl_easy_setopt_off(handle, option, curl_off_t(offset)), "setting option \(option.rawValue)")
    }

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        return countdown_curl_easy_getinfo_long(handle, info, &value) == CURLE_OK ? value : 0
    }

    /// libcurl's message about the last transfer's failure, or `fallback` when it wrote none.
    func errorMessage(fallback: String) -> String {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? fallback : text
    }

    /// Clears every option (open connections stay in the multi's cache); the next request sets them all again.
    func reset() {
        curl_easy_reset(handle)
        shape = nil
        headerList = nil
        url = nil
    }
}

import CCurl

/// Owner of one libcurl easy handle (`CURL *`); `deinit` runs `curl_easy_cleanup`.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer

    init() throws {
        try Curl.ensureGlobalInit()
        guard let handle = curl_easy_init() else { throw HTTPClientError(.other, "curl_easy_init failed") }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

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

    /// Clears every option so the handle can serve another request (open connections stay in the multi's cache).
    func reset() { curl_easy_reset(handle) }
}
